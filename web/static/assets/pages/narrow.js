// Tables as cards on narrow screens: app.css (max-width: 600px) lays
// each row of a .table-wrap table out as a card, one line per cell, and
// each line needs its column's name. cardTables(root) writes it as the
// cell's data-label (from the table's column headers) for every table
// under root, now and as tables are added or refilled later (pages load
// more rows), until the page's cleanup disconnects it.
export function cardTables(root) {
  const label = (table) => {
    const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    for (const tr of table.querySelectorAll('tbody tr')) {
      [...tr.children].forEach((td, i) => {
        if (heads[i] && td.getAttribute('data-label') !== heads[i]) td.setAttribute('data-label', heads[i]);
      });
    }
  };
  const all = () => root.querySelectorAll('.table-wrap table').forEach(label);
  all();
  const seen = new MutationObserver(all);
  seen.observe(root, { childList: true, subtree: true });
  return () => seen.disconnect();
}
