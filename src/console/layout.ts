/**
 * The page frame shared by every console page: skip link, navigation, the outcome notice of the
 * last action, and the main landmark. No scripts: every action is a plain form.
 */
import { z } from 'zod';
import type { ConsoleContext, Session } from './context.ts';
import { csrfField } from './csrf.ts';
import { html, type SafeHtml } from './html.ts';
import { STYLESHEET_PATH } from './styles.ts';

/**
 * Outcomes are passed through redirects as codes, never as text, so a crafted link cannot make
 * the console display words of an attacker's choosing.
 */
const NOTICES = {
  approved: { kind: 'success', text: 'Approved. The reply is queued and the worker will send it.' },
  'edited-sent': { kind: 'success', text: 'Saved your edit. The edited reply is queued and the worker will send it.' },
  saved: { kind: 'success', text: 'Saved your edit. The draft still waits for review.' },
  discarded: { kind: 'success', text: 'Discarded the draft. Nothing was sent.' },
  'not-a-draft': { kind: 'warning', text: 'That reply had already been handled (queued, sent or discarded), so nothing was changed.' },
  'smtp-missing': {
    kind: 'error',
    text: 'Sending is not configured (SMTP_HOST is not set), so nothing was approved. Configure SMTP, or answer from your mail client.',
  },
  'fact-set': { kind: 'success', text: 'Set the fact. It is recorded in the decision trail as an operator change.' },
  'fact-corrected': { kind: 'success', text: 'Corrected the fact. The old value is kept in the history.' },
  'fact-deleted': { kind: 'success', text: 'Deleted the fact. It no longer reaches any prompt.' },
  'fact-stale': { kind: 'warning', text: 'That fact had already been changed or deleted, so nothing was done.' },
  erased: { kind: 'success', text: 'Erased the customer: profile, threads, messages, drafts and queued jobs.' },
  'erase-mismatch': { kind: 'error', text: 'The confirmation did not match the customer, so nothing was erased.' },
  'kb-removed': { kind: 'success', text: 'Removed the document and its passages. Drafts no longer draw on it.' },
  'logged-out': { kind: 'success', text: 'You are logged out.' },
  'send-confirmed': { kind: 'success', text: 'Recorded as sent. Nothing was sent again.' },
  'send-requeued': { kind: 'success', text: 'Back in the outbox: the worker will send it again.' },
  'taken-over': { kind: 'success', text: 'The thread is yours: it is off the handed-over list.' },
  'promotion-queued': {
    kind: 'success',
    text: 'Promotion queued: the worker reviews the messages no pass has seen yet; the profile and the decision trail show the outcome.',
  },
  'nothing-to-promote': { kind: 'warning', text: 'This customer has no thread to promote.' },
  'address-linked': {
    kind: 'success',
    text: 'Linked the address. A profile it had of its own is merged; values the two disagreed on are settled in the decision trail.',
  },
} as const;

export type NoticeCode = keyof typeof NOTICES;

const noticeQuery = z.object({ notice: z.enum(Object.keys(NOTICES) as [NoticeCode, ...NoticeCode[]]).optional() }).loose();

export function readNotice(c: ConsoleContext): NoticeCode | null {
  const parsed = noticeQuery.safeParse(c.req.query());
  return parsed.success ? (parsed.data.notice ?? null) : null;
}

export type Section = 'drafts' | 'customers' | 'commitments' | 'knowledge' | 'quality' | 'skipped' | 'health';

export interface PageOptions {
  title: string;
  section: Section | null;
  session: Session | null;
  notice?: NoticeCode | null;
  body: SafeHtml;
}

function navLink(href: string, label: string, section: Section, current: Section | null): SafeHtml {
  return html`<li><a href="${href}"${section === current ? html` aria-current="page"` : ''}>${label}</a></li>`;
}

function noticeBox(code: NoticeCode | null | undefined): SafeHtml {
  if (!code) return html``;
  const notice = NOTICES[code];
  // An error interrupts (alert); an outcome is announced politely (status).
  const role = notice.kind === 'error' ? 'alert' : 'status';
  return html`<p class="notice notice-${notice.kind}" role="${role}">${notice.text}</p>`;
}

export function renderPage(options: PageOptions): string {
  const { session } = options;
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${options.title} · Support agent console</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <p class="brand"><a href="/drafts">Support agent</a></p>
  ${session?.model ? html`<p class="model" title="the model drafts are made with">${session.model}</p>` : ''}
  ${
    session
      ? html`<nav aria-label="Console">
    <ul>
      ${navLink('/drafts', 'Drafts to review', 'drafts', options.section)}
      ${navLink('/customers', 'Customers', 'customers', options.section)}
      ${navLink('/commitments', 'Commitments', 'commitments', options.section)}
      ${navLink('/knowledge', 'Knowledge', 'knowledge', options.section)}
      ${navLink('/quality', 'Quality', 'quality', options.section)}
      ${navLink('/skipped', 'Skipped mail', 'skipped', options.section)}
      ${navLink('/health', 'Health', 'health', options.section)}
    </ul>
  </nav>
  <form method="post" action="/logout" class="logout">${csrfField(session)}<button type="submit" class="link-button">Log out</button></form>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
${noticeBox(options.notice)}
${options.body}
</main>
</body>
</html>
`;
  return page.value;
}
