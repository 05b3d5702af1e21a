//! The scripts a [`Tab`](super::Tab) runs in the page: reading what it
//! shows, and filling, building and clicking a form as a person would.

/// The page shown: `[outerHTML, innerText, title, URL]`, or those four and
/// `true` when the HTML and text together exceed `arguments[0]` characters
/// (then both empty). The text is not asked for when the HTML alone is
/// over: `innerText` lays the page out, which an oversized page makes slow.
pub(super) const READ_PAGE: &str = r#"
const title = document.title.slice(0, 4096);
const over = () => ['', '', title, location.href, true];
const html = document.documentElement ? document.documentElement.outerHTML : '';
if (html.length > arguments[0]) return over();
const text = document.body ? document.body.innerText : '';
if (html.length + text.length > arguments[0]) return over();
return [html, text, title, location.href];
"#;

/// Fills form `arguments[0]` so that clicking its submit button
/// `arguments[1]` sends `arguments[2]`, and marks that button (then
/// [`CLICK_POINT`]); else why not.
pub(super) const FILL: &str = r#"
const [index, button, want] = arguments;
const form = document.querySelectorAll('form')[index];
if (!form) return 'the form is gone from the page';
const submit = e => (e.localName === 'button' && !['reset', 'button'].includes((e.getAttribute('type') || '').toLowerCase()))
  || (e.localName === 'input' && ['submit', 'image'].includes(e.type));
const buttons = Array.from(form.elements).filter(e => submit(e) && !e.matches(':disabled'));
if (button === null || !buttons[button]) return 'it has no submit button inside it a person can click';
const clicked = buttons[button];
const rest = want.slice();
if (clicked.name) {
  for (let i = rest.length - 1; i >= 0; i--) {
    if (rest[i][0] === clicked.name && rest[i][1] === clicked.value) { rest.splice(i, 1); break; }
  }
}
for (const c of Array.from(form.elements)) {
  // Disabled controls send nothing and stay as they are.
  if (!c.name || submit(c) || c.matches(':disabled') || ['fieldset', 'output', 'object'].includes(c.localName)) continue;
  if (c.type === 'button' || c.type === 'reset') continue;
  const i = rest.findIndex(([n]) => n === c.name);
  if (i < 0) { c.disabled = true; continue; }
  const value = rest[i][1];
  if (c.type === 'checkbox' || c.type === 'radio') {
    if (c.value === value) { c.checked = true; rest.splice(i, 1); } else { c.checked = false; }
    continue;
  }
  rest.splice(i, 1);
  if (c.localName === 'select') {
    if (![...c.options].some(o => o.value === value)) { const o = document.createElement('option'); o.value = value; c.appendChild(o); }
    c.value = value;
  } else if (c.type === 'file') {
    c.disabled = true;
  } else {
    c.value = value;
  }
}
for (const [n, v] of rest) {
  const h = document.createElement('input');
  h.type = 'hidden'; h.name = n; h.value = v; form.appendChild(h);
}
clicked.setAttribute('data-grantgate-click', '');
"#;

/// Builds a form (`arguments`: method, action, fields) at the end of the
/// page with a button of its own, and marks that button (then
/// [`CLICK_POINT`]); [`ELSEWHERE`] when the page is not of the action's
/// origin.
pub(super) const INJECT: &str = r#"
const [method, action, fields] = arguments;
if (location.origin !== new URL(action).origin) return 'the page shown is of another origin';
const form = document.createElement('form');
form.method = method; form.action = action;
for (const [n, v] of fields) {
  const h = document.createElement('input');
  h.type = 'hidden'; h.name = n; h.value = v; form.appendChild(h);
}
const b = document.createElement('button');
b.type = 'submit'; b.textContent = 'send';
b.setAttribute('data-grantgate-click', '');
form.appendChild(b);
(document.body || document.documentElement).appendChild(form);
"#;

/// What [`INJECT`] answers on a page of another origin than the form's.
pub(super) const ELSEWHERE: &str = "the page shown is of another origin";

/// The marked element's in-view centre, scrolled into view, where a click
/// lands on the element itself (WebDriver's element click: one another
/// element covers is intercepted), as `[x, y]`; else why not. Marks the
/// page, so that the next one is told from it. The end of [`FILL`] and
/// [`INJECT`].
pub(super) const CLICK_POINT: &str = r#"
const e = document.querySelector('[data-grantgate-click]');
if (!e) return 'it is gone from the page';
e.scrollIntoView({block: 'center', inline: 'center'});
const r = e.getClientRects()[0];
const left = r && Math.max(r.left, 0), right = r && Math.min(r.right, innerWidth);
const top = r && Math.max(r.top, 0), bottom = r && Math.min(r.bottom, innerHeight);
if (!r || right <= left || bottom <= top) return 'it is not shown';
const [x, y] = [(left + right) / 2, (top + bottom) / 2];
const hit = document.elementFromPoint(x, y);
if (!hit || !e.contains(hit)) return `<${hit ? hit.localName : 'nothing'}> covers it`;
window.__grantgate_old = true;
return [x, y];
"#;
