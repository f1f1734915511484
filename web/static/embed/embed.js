// The embeddable market (GET /embed/markets/{id}): shows the market's
// live YES price. It follows the market's public stream
// (/api/v1/stream?topics=market:{id}) and, while the stream is down or
// the browser has none, reads the market every few seconds; while the
// stream is up it still reads it once a minute, in case a message was
// missed. Inlined into its page with a CSP hash: no request of its own.
(() => {
  'use strict';
  const root = document.querySelector('main[data-market]');
  if (!root) return;
  const id = root.dataset.market;
  const price = document.getElementById('price');
  const side = document.getElementById('side');
  const fill = document.getElementById('fill');
  // The page's words, in its language, from its data attributes.
  const outcomes = { YES: root.dataset.wonYes, NO: root.dataset.wonNo, VOID: root.dataset.void };

  function show(p) {
    if (typeof p !== 'number' || !isFinite(p)) return;
    const pct = (p * 100).toFixed(1) + '%';
    price.textContent = pct;
    side.textContent = root.dataset.yes;
    fill.style.width = pct;
    root.dataset.price = String(p);
  }
  function resolved(outcome) {
    price.textContent = outcomes[outcome] || outcome;
    side.textContent = '';
    fill.style.width = outcome === 'YES' ? '100%' : '0';
    root.dataset.outcome = outcome;
  }
  if (root.dataset.outcome) resolved(root.dataset.outcome);
  else show(Number(root.dataset.price));

  async function read() {
    try {
      const r = await fetch('/api/v1/markets/' + encodeURIComponent(id), { credentials: 'omit', cache: 'no-store' });
      if (!r.ok) return;
      const m = await r.json();
      if (m.winning_outcome) resolved(m.winning_outcome);
      else show(m.yes_probability);
    } catch (e) {
      // Offline for now: the next read tries again.
    }
  }

  let es = null;
  const live = () => es !== null && es.readyState === 1;
  function poll() {
    read().finally(() => setTimeout(poll, live() ? 60000 : 5000));
  }
  if (typeof EventSource === 'function') {
    es = new EventSource('/api/v1/stream?topics=market:' + encodeURIComponent(id));
    const onPrice = (e) => {
      const d = JSON.parse(e.data);
      if (String(d.market_id) === id && !root.dataset.outcome) show(d.yes_probability);
    };
    es.addEventListener('price', onPrice);
    es.addEventListener('trade', onPrice);
    es.addEventListener('market_resolved', read);
    es.addEventListener('reset', read);
    // data-live says whether the stream is open (tests wait for it).
    es.addEventListener('open', () => { root.dataset.live = '1'; read(); });
    es.addEventListener('error', () => { root.dataset.live = ''; });
  }
  setTimeout(poll, 5000);
})();
