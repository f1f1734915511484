// An event's comments: top-level ones newest first, one level of replies,
// like/dislike reactions, and new comments arriving live (the event's
// stream carries them). Every comment's text is set as text, never markup.
import { h, clear, field } from '../dom.js';
import { t, dateTime, num } from '../i18n.js';
import { api, query } from '../api.js';
import { getMe } from '../state.js';
import { inlineAlert, empty, showError, announce, statusBox } from '../ui.js';

const PAGE = 20;

export function comments(box, ev, signal) {
  const list = h('div');
  const more = h('div', { class: 'actions' });
  const formBox = h('div');
  const shown = new Map(); // comment id → {c, node, repliesBox, open}
  let offset = 0;

  clear(box, h('h2', { id: 'comments-title' }, t('comments.title')), formBox, list, more);

  function authorName(c) {
    return c.user && c.user.name ? c.user.name : t('comments.anonymous');
  }

  function reactions(c, onUpdate) {
    const tally = h('span', { class: 'meta' }, t('comments.likes', { n: num(c.likes_count) }), ' · ', t('comments.dislikes', { n: num(c.dislikes_count) }));
    // Visitors see the counts; reacting needs an account.
    if (!getMe()) return [tally];
    const likeBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-kind': 'like', 'aria-pressed': c.user_reaction === 'like' ? 'true' : 'false' }, t('comments.like'));
    const dislikeBtn = h('button', { type: 'button', class: 'btn btn-small', 'data-kind': 'dislike', 'aria-pressed': c.user_reaction === 'dislike' ? 'true' : 'false' }, t('comments.dislike'));
    const react = async (kind) => {
      const next = c.user_reaction === kind ? 'none' : kind;
      try {
        const updated = await api('PUT', `/comments/${c.id}/reaction`, { reaction: next });
        onUpdate(updated, kind);
      } catch (e) {
        showError(e);
      }
    };
    likeBtn.addEventListener('click', () => react('like'));
    dislikeBtn.addEventListener('click', () => react('dislike'));
    return [likeBtn, dislikeBtn, tally];
  }

  function commentNode(c, isReply) {
    // id="comment-N": a reply notification links to /events/E#comment-N.
    const node = h('article', { class: 'comment', id: `comment-${c.id}`, tabindex: '-1', 'aria-labelledby': `comment-${c.id}-by` });
    const repliesBox = h('div', { class: 'replies', hidden: true });
    const replyForm = h('div');
    const entry = { c, node, repliesBox, open: false, loaded: false };
    if (!isReply) shown.set(c.id, entry);

    function paint() {
      const cur = entry.c;
      const actions = h('div', { class: 'actions' }, reactions(cur, (updated, kind) => {
        entry.c = { ...entry.c, ...updated };
        paint();
        const again = node.querySelector(`.actions [data-kind="${kind}"]`);
        if (again) again.focus();
      }));
      if (!isReply) {
        if (getMe()) {
          actions.append(h('button', { type: 'button', class: 'btn btn-small', onClick: () => openReply() }, t('comments.reply')));
        }
        if (cur.replies_count > 0) {
          actions.append(h('button', { type: 'button', class: 'btn btn-small', 'aria-expanded': entry.open ? 'true' : 'false', onClick: toggleReplies },
            entry.open ? t('comments.hide_replies') : t('comments.show_replies', { n: num(cur.replies_count) })));
        }
      }
      clear(node,
        h('p', { class: 'meta', id: `comment-${cur.id}-by` }, h('span', { class: 'comment-author' }, cur.user && cur.user.id && !cur.user.profile_hidden ? h('a', { href: `/users/${cur.user.id}` }, authorName(cur)) : authorName(cur)), ' · ', h('time', { datetime: cur.created_at }, dateTime(cur.created_at))),
        h('p', { class: 'comment-body' }, cur.content),
        actions,
        isReply ? null : replyForm,
        isReply ? null : repliesBox);
    }

    async function loadReplies() {
      try {
        const r = await api('GET', `/comments/${entry.c.id}/replies` + query({ limit: 100 }), null, { signal });
        const replies = r.comments || [];
        clear(repliesBox, replies.map((x) => commentNode(x, true)));
        entry.loaded = true;
        if (replies.length < 100) entry.c = { ...entry.c, replies_count: replies.length };
      } catch (e) {
        showError(e);
      }
    }

    async function toggleReplies() {
      entry.open = !entry.open;
      repliesBox.hidden = !entry.open;
      if (entry.open && !entry.loaded) await loadReplies();
      paint();
      node.querySelector('[aria-expanded]')?.focus();
    }

    function openReply() {
      const alert = inlineAlert();
      const input = h('textarea', { maxlength: '2000', required: true });
      const form = h('form', { class: 'reply-form' }, alert, field(t('comments.reply_label'), input),
        h('div', { class: 'actions' },
          h('button', { type: 'submit', class: 'btn btn-primary' }, t('comments.post_reply')),
          h('button', { type: 'button', class: 'btn', onClick: () => clear(replyForm) }, t('action.cancel'))));
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        alert.textContent = '';
        try {
          await api('POST', `/events/${ev.id}/comments`, { content: input.value, parent_id: entry.c.id });
          clear(replyForm);
          entry.open = true;
          repliesBox.hidden = false;
          await loadReplies();
          paint();
        } catch (err) {
          alert.textContent = err.message;
        }
      });
      clear(replyForm, form);
      input.focus();
    }

    entry.paint = paint;
    entry.loadReplies = loadReplies;
    paint();
    return node;
  }

  function paintForm() {
    if (!getMe()) {
      clear(formBox, h('p', null, h('a', { href: `/login?next=${encodeURIComponent(location.pathname)}` }, t('comments.login'))));
      return;
    }
    const alert = inlineAlert();
    const done = statusBox();
    const input = h('textarea', { maxlength: '2000', required: true });
    const form = h('form', null, alert, field(t('comments.new'), input),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn btn-primary' }, t('comments.post'))), done);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      alert.textContent = '';
      try {
        const c = await api('POST', `/events/${ev.id}/comments`, { content: input.value });
        input.value = '';
        add(c, true);
        done.textContent = t('comments.posted');
      } catch (err) {
        alert.textContent = err.message;
      }
    });
    clear(formBox, form);
  }

  function add(c, atTop) {
    if (shown.has(c.id)) return;
    const node = commentNode(c, false);
    const none = list.querySelector('.empty');
    if (none) none.remove();
    if (atTop) list.prepend(node);
    else list.append(node);
  }

  async function loadPage() {
    let r;
    try {
      r = await api('GET', `/events/${ev.id}/comments` + query({ limit: PAGE, offset }), null, { signal });
    } catch (e) {
      showError(e);
      return;
    }
    const page = r.comments || [];
    if (offset === 0 && !page.length) list.append(empty(t('comments.empty')));
    for (const c of page) add(c, false);
    offset += page.length;
    clear(more);
    if (page.length === PAGE) more.append(h('button', { type: 'button', class: 'btn', onClick: loadPage }, t('action.load_more')));
  }

  // goToTarget brings the comment that location.hash names (#comment-N,
  // a reply notification's link) into view: it reads further pages until
  // the comment is shown (a few at most), opens its replies, scrolls to
  // it, highlights it and moves the focus there.
  async function goToTarget() {
    const m = /^#comment-(\d+)$/.exec(location.hash);
    if (!m) return;
    const id = Number(m[1]);
    for (let i = 0; i < 10 && !document.getElementById(`comment-${id}`) && more.querySelector('button'); i++) await loadPage();
    const entry = shown.get(id);
    if (entry && entry.c.replies_count > 0 && !entry.open) {
      entry.open = true;
      entry.repliesBox.hidden = false;
      await entry.loadReplies();
      entry.paint();
    }
    const node = document.getElementById(`comment-${id}`);
    if (!node) return;
    node.classList.add('comment-target');
    node.scrollIntoView({ block: 'center' });
    node.focus({ preventScroll: true });
  }

  async function reload() {
    shown.clear();
    offset = 0;
    clear(list);
    paintForm();
    await loadPage();
    await goToTarget();
  }

  reload();

  return {
    reload,
    // live(c): a comment or reply from the event's stream.
    live(c) {
      if (c.parent_id) {
        const parent = shown.get(c.parent_id);
        if (!parent) return;
        if (parent.open) {
          parent.loadReplies().then(() => parent.paint());
        } else {
          parent.c = { ...parent.c, replies_count: parent.c.replies_count + 1 };
          parent.loaded = false;
          parent.paint();
        }
        return;
      }
      if (shown.has(c.id)) return;
      add({ ...c, user_reaction: null }, true);
      offset += 1;
      announce(t('comments.new_live', { name: authorName(c) }));
    },
  };
}
