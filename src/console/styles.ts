/**
 * The console's one stylesheet, served from `/static/` so the Content-Security-Policy can forbid
 * inline styles and scripts. Its URL carries a content hash, so it can be cached forever.
 */
import { createHash } from 'node:crypto';

export const STYLESHEET = `
:root {
  --fg: #1b1f24; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa; --line: #d0d7de;
  --accent: #0a58ca; --focus: #ffbf47; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e;
  --human-bg: #fff8c5; --human-line: #d4a72c;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.45;
  color: var(--fg); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; box-shadow: 0 0 0 5px var(--fg); }
.skip-link { position: absolute; left: -999px; top: 0; background: var(--fg); color: #fff; padding: .5rem 1rem; z-index: 10; }
.skip-link:focus { left: .5rem; }
.site-header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .5rem 1rem; border-bottom: 1px solid var(--line); background: var(--panel); }
.brand { margin: 0; font-weight: 700; }
.brand a { color: var(--fg); text-decoration: none; }
.model { margin: 0; font-size: 0.85rem; color: var(--muted, #555); }
nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
nav a { display: inline-block; padding: .35rem .1rem; }
nav a[aria-current="page"] { font-weight: 700; color: var(--fg); text-decoration-thickness: 3px; }
nav.filters a[aria-current="true"] { font-weight: 700; color: var(--fg); }
.logout { margin-left: auto; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
main:focus { outline: none; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.25rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1.05rem; margin: 1rem 0 .35rem; }
.muted { color: var(--muted); }
.notice { padding: .6rem .9rem; border-left: 5px solid; background: var(--panel); }
.notice-success { border-color: var(--ok); }
.notice-warning { border-color: var(--warn); }
.notice-error { border-color: var(--bad); }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; margin: 0 0 1rem; background: var(--bg); }
.card > h2, .card > h3 { margin-top: .25rem; }
.needs-human { border: 3px solid var(--human-line); background: var(--human-bg); }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; border: 1px solid var(--line); font-size: .85rem; background: var(--panel); }
.badge-human { background: var(--human-line); border-color: var(--human-line); color: #000; font-weight: 700; }
.badge-bad { border-color: var(--bad); color: var(--bad); }
.badge-ok { border-color: var(--ok); color: var(--ok); }
.draft-grid { display: grid; gap: 1rem; }
@media (min-width: 52rem) { .draft-grid { grid-template-columns: 3fr 2fr; } }
.context { background: var(--panel); padding: .5rem .75rem; border-radius: 4px; }
.context h3:first-child { margin-top: .25rem; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; }
pre.mail { background: var(--panel); border: 1px solid var(--line); padding: .6rem; max-height: 32rem; overflow: auto; margin: .25rem 0; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-start; margin-top: .5rem; }
.actions form { margin: 0; }
.pager { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; margin: .75rem 0; }
.send-disabled { align-self: center; }
button:disabled { opacity: .55; cursor: not-allowed; }
.inline-list { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 1rem; }
tr.overdue td:first-child { border-left: 4px solid var(--bad); }
button, .button { font: inherit; padding: .45rem .9rem; border-radius: 4px; border: 1px solid var(--fg); background: var(--bg); color: var(--fg); cursor: pointer; min-height: 2.5rem; text-decoration: none; display: inline-block; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { border-color: var(--bad); color: var(--bad); }
button.danger.solid { background: var(--bad); color: #fff; }
.link-button { border: none; background: none; color: var(--accent); text-decoration: underline; padding: .35rem .1rem; min-height: auto; }
label { display: block; font-weight: 600; margin: .5rem 0 .2rem; }
input[type="text"], input[type="password"], input[type="search"], input[type="date"], select, textarea {
  font: inherit; width: 100%; max-width: 40rem; padding: .4rem .5rem; border: 1px solid var(--muted); border-radius: 4px; background: #fff; color: var(--fg);
}
textarea { min-height: 10rem; max-width: none; }
details > summary { cursor: pointer; padding: .3rem 0; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid var(--line); }
th { background: var(--panel); }
.table-wrap { overflow-x: auto; }
.inline-form { display: flex; flex-wrap: wrap; gap: .35rem; align-items: flex-end; }
.inline-form label { margin: 0; }
.inline-form input[type="text"] { width: 14rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
.accepted { color: var(--ok); font-weight: 600; }
.rejected { color: var(--bad); font-weight: 600; }
.login { max-width: 24rem; margin: 3rem auto; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 40rem) {
  th, td { padding: .3rem .25rem; font-size: .92rem; }
  .logout { margin-left: 0; }
}
`;

const hash = createHash('sha256').update(STYLESHEET).digest('hex').slice(0, 12);

export const STYLESHEET_PATH = `/static/console.${hash}.css`;
