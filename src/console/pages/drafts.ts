/**
 * Drafts to review, newest first, each beside its thread's notes and the customer's words, with
 * approve, edit-then-send and discard. Drafts the agent flagged for a human stand out.
 */
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import type { ConsoleContext, Session } from '../context.ts';
import { csrfField } from '../csrf.ts';
import {
  approveDraft,
  discardDraft,
  editAndSendDraft,
  editDraft,
  settleSend,
  takeOverThread,
  type DraftActionResult,
} from '../draft-actions.ts';
import { handedOffThreads, unknownSends, type HandedOffThread, type UnknownSend } from '../../store/attention.ts';
import { countDraftsToReview, draftsToReview, draftThreadId, recentlyHandledDrafts, type DraftCard } from '../../store/draft-review.ts';
import { TAGGED_THREADS_LIMIT, threadsWithTag, type TaggedThread } from '../../store/thread-tags.ts';
import type { DraftFlag } from '../../store/turns.ts';
import { maskText } from '../../mail/sensitive-values.ts';
import { listMailboxes } from '../../store/mailboxes.ts';
import {
  DRAFTS_PAGE_SIZE,
  SEND_DISABLED_REASON,
  draftFilters,
  draftStatusLabel,
  pager,
  readDraftListQuery,
  type DraftListQuery,
} from '../draft-list.ts';
import { formText, readForm, readParam } from '../forms.ts';
import { heading, html, list, mailText, time, type SafeHtml } from '../html.ts';
import { readNotice, renderPage, type NoticeCode } from '../layout.ts';

const HANDLED_SIZE = 20;

export type ReturnTo = 'drafts' | 'thread';

function customerLabel(customer: DraftCard['thread']['customer'], address: string): string {
  return customer.name ? `${customer.name} <${address}>` : address;
}

/** The status as a badge; a discarded draft says whether a person discarded it or a newer draft superseded it. */
function statusBadge(status: string, outcome: string): SafeHtml {
  const label = draftStatusLabel(status, outcome);
  return html`<span class="badge ${label.tone}">${label.text}</span>`;
}

function draftActions(draft: DraftCard, session: Session, returnTo: ReturnTo, canSend: boolean): SafeHtml {
  const titleId = `draft-${draft.id}-title`;
  const hidden = html`${csrfField(session)}<input type="hidden" name="from" value="${returnTo}">`;
  // Without SMTP the send buttons are disabled, with the reason beside them (Discard and Save still work).
  const reasonId = `draft-${draft.id}-no-send`;
  const sendAttrs = canSend ? html`aria-describedby="${titleId}"` : html`disabled aria-describedby="${titleId} ${reasonId}"`;
  const reason = canSend ? '' : html`<span class="muted send-disabled" id="${reasonId}">${SEND_DISABLED_REASON}</span>`;
  return html`
  <div class="actions">
    <form method="post" action="/drafts/${draft.id}/approve">${hidden}
      <button type="submit" class="primary" ${sendAttrs}>Approve and send</button>
    </form>
    <form method="post" action="/drafts/${draft.id}/discard">${hidden}
      <button type="submit" class="danger" aria-describedby="${titleId}">Discard</button>
    </form>
    ${reason}
  </div>
  <details>
    <summary>Edit before sending</summary>
    <form method="post" action="/drafts/${draft.id}/edit">${hidden}
      <label for="body-${draft.id}">Reply to ${draft.toAddress}</label>
      <textarea id="body-${draft.id}" name="body" rows="12" spellcheck="true">
${draft.body}</textarea>
      <div class="actions">
        <button type="submit" name="then" value="send" class="primary" ${sendAttrs}>Save and send</button>
        <button type="submit" name="then" value="save" aria-describedby="${titleId}">Save draft</button>
      </div>
    </form>
  </details>`;
}

/** The sources the reply cites, each with the sentences that cite it; a knowledge passage with its text. */
function sourceList(sources: DraftCard['sources']): SafeHtml {
  if (sources.length === 0) return html``;
  return html`<details class="sources" open><summary>Sources cited (${sources.length})</summary><ul>${sources.map(
    (s) =>
      html`<li><strong>${s.source}</strong>${
        s.passage
          ? html` · ${s.passage.titlePath} <span class="muted">(${s.passage.document})</span><blockquote>${s.passage.text}</blockquote>`
          : ''
      }${s.sentences.length ? html`<p class="muted">Cited for: ${s.sentences.map((t) => `“${t}”`).join(' ')}</p>` : ''}</li>`,
  )}</ul></details>`;
}

/** The knowledge passages the draft's prompt held, best match first: cited, or given and not cited. */
function passagesGivenList(passages: DraftCard['passagesGiven']): SafeHtml {
  if (passages.length === 0) return html``;
  const cited = passages.filter((p) => p.cited).length;
  return html`<details class="passages-given"><summary>Passages used (${passages.length} given, ${cited} cited)</summary><ol>${passages.map(
    (p) =>
      html`<li><a href="/knowledge/passage/${encodeURIComponent(p.id)}">${p.titlePath || p.title || `kb:${p.id}`}</a>${
        p.title && p.titlePath && !p.titlePath.startsWith(p.title) ? html` <span class="muted">(${p.title})</span>` : ''
      } <span class="muted">kb:${p.id}</span> · ${p.cited ? html`<strong>cited</strong>` : 'given, not cited'}</li>`,
  )}</ol></details>`;
}

/** Why the draft needs a person (the outbound guard's findings and similar). */
function flagList(flags: readonly DraftFlag[]): SafeHtml {
  if (flags.length === 0) return html``;
  return html`<div class="notice notice-warning"><p>Why a person should look:</p><ul>${flags.map(
    (f) => html`<li><strong>${f.rule}</strong>: ${f.reason}${f.excerpt ? html` (“${f.excerpt}”)` : ''}</li>`,
  )}</ul></div>`;
}

function unknownSendsSection(sends: UnknownSend[], session: Session): SafeHtml {
  if (sends.length === 0) return html``;
  return html`<section aria-labelledby="unknown-title" class="card needs-human">
  <h2 id="unknown-title">Sends to check (${sends.length})</h2>
  <p>The agent started sending these but never learned whether the mail server took them (the process stopped
  mid-send). They are never sent again by themselves: check with the customer or the mail server's log.</p>
  ${sends.map(
    (d) => html`<div id="unknown-${d.id}">
    <p><a href="/threads/${d.threadId}#draft-${d.id}">${d.subject}</a> to ${d.toAddress} · ${time(d.updatedAt)}</p>
    <div class="actions">
      <form method="post" action="/drafts/${d.id}/settle">${csrfField(session)}<input type="hidden" name="outcome" value="sent">
        <button type="submit">It arrived: record as sent</button></form>
      <form method="post" action="/drafts/${d.id}/settle">${csrfField(session)}<input type="hidden" name="outcome" value="resend">
        <button type="submit" class="primary">It did not arrive: send again</button></form>
    </div></div>`,
  )}
</section>`;
}

function handedOffSection(threads: HandedOffThread[], session: Session): SafeHtml {
  if (threads.length === 0) return html``;
  return html`<section aria-labelledby="handoff-title" class="card">
  <h2 id="handoff-title">Handed to a person (${threads.length})</h2>
  <p>The agent stopped answering these threads. It answers again when a human-looking message arrives.</p>
  <ul>${threads.map(
    (t) => html`<li id="handoff-${t.id}"><a href="/threads/${t.id}">${t.subject || '(no subject)'}</a> · ${t.customer} · ${time(t.at)}
      <br><span class="muted">${t.reason}</span>
      <form method="post" action="/threads/${t.id}/take-over">${csrfField(session)}<button type="submit">I have taken it over</button></form></li>`,
  )}</ul>
</section>`;
}

/** Each tag links to the drafts and threads carrying it. */
export function tagLinks(tags: readonly string[]): SafeHtml {
  return html`${tags.map((t, i) => html`${i > 0 ? ', ' : ''}<a href="/drafts?tag=${encodeURIComponent(t)}">${t}</a>`)}`;
}

function taggedThreadsSection(tag: string, threads: TaggedThread[]): SafeHtml {
  return html`<section aria-labelledby="tagged-title" class="card">
  <h2 id="tagged-title">Threads tagged ${tag} (${threads.length}${threads.length >= TAGGED_THREADS_LIMIT ? '+' : ''})</h2>
  <p><a href="/drafts">Show all drafts</a></p>
  ${
    threads.length === 0
      ? html`<p class="muted">No thread carries this tag.</p>`
      : html`<ul>${threads.map(
          (t) =>
            html`<li id="tagged-${t.id}"><a href="/threads/${t.id}">${t.subject || '(no subject)'}</a> · <span class="badge">${t.status}</span> · ${t.customer.name ?? t.customer.key} · to ${t.mailbox} · ${time(t.lastMessageAt)}</li>`,
        )}</ul>`
  }
</section>`;
}

const mailboxQuery = z.string().trim().toLowerCase().pipe(z.email()).optional().catch(undefined);

const tagQuery = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_]{0,59}$/)
  .optional()
  .catch(undefined);

/** One draft beside its context; actions only while it is still a draft. */
export function draftCard(draft: DraftCard, session: Session, returnTo: ReturnTo, canSend: boolean, headingLevel: 2 | 3 = 2): SafeHtml {
  const titleId = `draft-${draft.id}-title`;
  const { thread } = draft;
  const sub = headingLevel === 2 ? 3 : 4;
  const { tags } = thread;
  return html`
<article class="card${draft.needsHuman ? ' needs-human' : ''}" id="draft-${draft.id}" aria-labelledby="${titleId}">
  ${heading(headingLevel, draft.subject, titleId)}
  <p>
    ${draft.needsHuman ? html`<span class="badge badge-human">Needs a human</span> ` : ''}${statusBadge(draft.status, draft.outcome)}
    To <a href="/customers/${thread.customer.id}">${customerLabel(thread.customer, draft.toAddress)}</a>
    ${draft.ccAddresses.length > 0 ? html`· <span class="draft-cc">Cc ${draft.ccAddresses.join(', ')}</span>` : ''}
    · drafted ${time(draft.createdAt)}${draft.sentAt ? html` · sent ${time(draft.sentAt)}` : ''}
    ${returnTo === 'drafts' ? html`· <a href="/threads/${thread.id}" aria-describedby="${titleId}">Open thread</a>` : ''}
  </p>
  ${draft.error ? html`<p class="notice notice-error">Last error: ${draft.error}</p>` : ''}
  ${flagList(draft.flags)}
  <div class="draft-grid">
    <section aria-label="Draft reply">
      ${heading(sub, 'Draft reply')}
      ${mailText(draft.body)}
      ${sourceList(draft.sources)}
      ${passagesGivenList(draft.passagesGiven)}
      ${draft.status === 'draft' ? draftActions(draft, session, returnTo, canSend) : ''}
    </section>
    <aside class="context" aria-label="Thread context">
      ${heading(sub, 'Customer wrote')}
      ${
        draft.customerWrote.length === 0
          ? html`<p class="muted">No message recorded for this turn.</p>`
          : draft.customerWrote.map((m) => mailText(maskText(m.text)))
      }
      ${heading(sub, 'Thread summary')}
      ${thread.summary ? html`<p>${thread.summary}</p>` : html`<p class="muted">none yet</p>`}
      ${heading(sub, 'Open items')}
      ${list(thread.openItems)}
      <p>Intent: ${thread.currentIntent || html`<span class="muted">unknown</span>`}${tags.length ? html` · Tags: ${tagLinks(tags)}` : ''}</p>
    </aside>
  </div>
</article>`;
}

export async function draftsPage(c: ConsoleContext): Promise<Response> {
  const runtime = c.get('runtime');
  const { db } = runtime;
  // ?tag=billing narrows the drafts to threads carrying the tag and lists those threads.
  const tag = tagQuery.parse(c.req.query('tag'));
  // ?mailbox=billing@acme.example narrows everything to one mailbox's threads and drafts.
  const mailboxes = await listMailboxes(db);
  const wanted = mailboxQuery.parse(c.req.query('mailbox'));
  const mailbox = wanted ? mailboxes.find((m) => m.address === wanted) : undefined;
  // An unknown mailbox matches nothing rather than everything.
  const mailboxId = wanted ? (mailbox?.id ?? 'none') : undefined;
  const listing = readDraftListQuery(c.req.query());
  const query: DraftListQuery = { ...listing, mailbox: wanted, tag };
  const filter = { tag, mailboxId, status: query.status, needsHuman: query.needsHuman };
  const [unknown, handedOff, drafts, total, handled, tagged] = await Promise.all([
    unknownSends(db),
    handedOffThreads(db, undefined, mailboxId),
    draftsToReview(db, DRAFTS_PAGE_SIZE, filter, (query.page - 1) * DRAFTS_PAGE_SIZE),
    countDraftsToReview(db, filter),
    recentlyHandledDrafts(db, HANDLED_SIZE, mailboxId),
    tag ? threadsWithTag(db, { tag, ...(mailboxId ? { mailboxId } : {}) }) : Promise.resolve(null),
  ]);
  const served = runtime.mailboxes.filter((m) => !mailboxId || m.mailbox.id === mailboxId);
  const canSend = served.length === 0 || served.some((m) => m.settings.smtp.host);
  // Each draft's own mailbox decides (the primary one when only one is served).
  const draftCanSend = (d: DraftCard) =>
    runtime.mailboxes.length === 0 ||
    Boolean(
      (runtime.mailboxes.length === 1 ? runtime.mailboxes[0] : runtime.mailboxes.find((m) => m.mailbox.id === d.mailboxId))?.settings.smtp
        .host,
    );
  const session = c.get('session');
  const what = `${query.needsHuman ? ' needing a person' : ''}${tag ? ` tagged ${tag}` : ''}`;
  const body = html`
<h1>Drafts to review${wanted ? ` · ${wanted}` : ''}</h1>
${draftFilters(query, mailboxes)}
${canSend ? '' : html`<p class="notice notice-warning">Sending is not configured (SMTP_HOST is not set): drafts can be edited or discarded, not sent from here.</p>`}
${unknownSendsSection(unknown, session)}
${handedOffSection(handedOff, session)}
${tag && tagged ? taggedThreadsSection(tag, tagged) : ''}
<p id="draft-count">${
    total === 0
      ? `No draft${what}${query.status === 'pending' ? ' waits for review' : ' here'}.`
      : `${total} draft${total === 1 ? '' : 's'}${what}${query.status === 'pending' ? ' waiting' : ''}, newest first.`
  }</p>
${pager(query, total)}
${drafts.map((d) => draftCard(d, session, 'drafts', draftCanSend(d)))}
${drafts.length > 10 ? pager(query, total) : ''}
<h2>Recently handled</h2>
${
  handled.length === 0
    ? html`<p class="muted">Nothing yet.</p>`
    : html`<div class="table-wrap"><table>
  <caption class="sr-only">Drafts already approved, sent, discarded or failed</caption>
  <thead><tr><th scope="col">Subject</th><th scope="col">To</th><th scope="col">Status</th><th scope="col">Updated</th></tr></thead>
  <tbody>${handled.map(
    (d) => html`<tr id="handled-${d.id}">
      <td><a href="/threads/${d.threadId}#draft-${d.id}">${d.subject}</a>${d.needsHuman ? html` <span class="badge badge-human">Needs a human</span>` : ''}</td>
      <td>${d.toAddress}</td>
      <td>${statusBadge(d.status, d.outcome)}${d.error ? html`<br><span class="muted">${d.error}</span>` : ''}</td>
      <td>${time(d.sentAt ?? d.updatedAt)}</td>
    </tr>`,
  )}</tbody></table></div>`
}`;
  return c.html(renderPage({ title: 'Drafts to review', section: 'drafts', session, notice: readNotice(c), body }));
}

const returnField = z.enum(['drafts', 'thread']).default('drafts');
const actionForm = z.object({ from: returnField }).loose();
const editForm = z
  .object({
    from: returnField,
    body: formText(100_000).refine((s) => s.trim().length > 0, 'must not be empty'),
    then: z.enum(['save', 'send']).default('save'),
  })
  .loose();

const OUTCOME: Record<Exclude<DraftActionResult, 'not-found' | 'done'>, NoticeCode> = {
  'not-a-draft': 'not-a-draft',
  'smtp-missing': 'smtp-missing',
};

async function afterAction(
  c: ConsoleContext,
  draftId: string,
  result: DraftActionResult,
  done: NoticeCode,
  returnTo: ReturnTo,
): Promise<Response> {
  if (result === 'not-found') throw new AppError('NOT_FOUND', 'that draft no longer exists');
  const notice = result === 'done' ? done : OUTCOME[result];
  if (returnTo === 'thread') {
    const threadId = await draftThreadId(c.get('runtime').db, draftId);
    if (threadId) return c.redirect(`/threads/${threadId}?notice=${notice}#draft-${draftId}`, 303);
  }
  return c.redirect(`/drafts?notice=${notice}`, 303);
}

export async function approveAction(c: ConsoleContext): Promise<Response> {
  const draftId = readParam(c, 'id');
  const form = await readForm(c, actionForm);
  return afterAction(c, draftId, await approveDraft(c.get('runtime'), draftId), 'approved', form.from);
}

export async function discardAction(c: ConsoleContext): Promise<Response> {
  const draftId = readParam(c, 'id');
  const form = await readForm(c, actionForm);
  return afterAction(c, draftId, await discardDraft(c.get('runtime'), draftId), 'discarded', form.from);
}

export async function editAction(c: ConsoleContext): Promise<Response> {
  const draftId = readParam(c, 'id');
  const form = await readForm(c, editForm);
  const runtime = c.get('runtime');
  const result = form.then === 'send' ? await editAndSendDraft(runtime, draftId, form.body) : await editDraft(runtime, draftId, form.body);
  return afterAction(c, draftId, result, form.then === 'send' ? 'edited-sent' : 'saved', form.from);
}

const settleForm = z.object({ outcome: z.enum(['sent', 'resend']) }).loose();

export async function settleAction(c: ConsoleContext): Promise<Response> {
  const draftId = readParam(c, 'id');
  const form = await readForm(c, settleForm);
  return afterAction(
    c,
    draftId,
    await settleSend(c.get('runtime'), draftId, form.outcome),
    form.outcome === 'sent' ? 'send-confirmed' : 'send-requeued',
    'drafts',
  );
}

export async function takeOverAction(c: ConsoleContext): Promise<Response> {
  const threadId = readParam(c, 'id');
  if (!(await takeOverThread(c.get('runtime'), threadId))) throw new AppError('NOT_FOUND', 'that thread is not waiting for a person');
  return c.redirect('/drafts?notice=taken-over', 303);
}
