/**
 * One thread as the agent sees it: its notes (summary, pinned items, open items, intent, tags,
 * status), the rolling buffer its last turn carried, why each profile fact was or was not in its
 * prompt, every
 * message's new text with the original one click away, its replies, and each turn's prompt and
 * token counts, so a reviewer can see exactly what the model was given.
 */
import { AppError } from '../../errors.ts';
import { bufferSectionOf } from '../../memory/context.ts';
import type { ContextTrace, FactInclusion } from '../../memory/profile-trace.ts';
import { listCommitments } from '../../store/commitments.ts';
import { threadDraftCards } from '../../store/draft-review.ts';
import {
  loadOriginalMessage,
  loadRawMessage,
  loadThreadDetail,
  threadMessages,
  threadOwner,
  threadTurns,
  type ThreadAttachment,
  type ThreadMessage,
} from '../../store/thread-view.ts';
import { formatBytes } from '../../mail/attachments.ts';
import { maskText } from '../../mail/sensitive-values.ts';
import type { ConsoleContext } from '../context.ts';
import { csrfField } from '../csrf.ts';
import { readParam } from '../forms.ts';
import { html, list, mailText, size, time, type SafeHtml } from '../html.ts';
import { readNotice, renderPage } from '../layout.ts';
import { commitmentsTable } from './commitments.ts';
import { draftCard, tagLinks } from './drafts.ts';

const RAW_DISPLAY_LIMIT = 1_000_000;

function sender(m: Pick<ThreadMessage, 'fromAddress' | 'fromName'>): string {
  if (!m.fromAddress) return 'unknown sender';
  return m.fromName ? `${m.fromName} <${m.fromAddress}>` : m.fromAddress;
}

/** One attachment and what became of its text: read (how much), an image named in the prompt, or skipped and why. */
function attachmentLine(a: ThreadAttachment): string {
  const name = `${a.filename ?? '(unnamed)'} (${formatBytes(a.size)})`;
  if (a.status === 'extracted')
    return `${name}: text read (${a.kind}, ${a.chars.toLocaleString('en-US')} characters${a.reason ? `; ${a.reason}` : ''})`;
  if (a.status === 'image') return `${name}: image, named in the prompt`;
  if (a.status === 'skipped') return `${name}: skipped, because ${a.reason ?? 'it could not be read'}`;
  return `${name}: not read (stored before attachments were read)`;
}

function messageCard(m: ThreadMessage): SafeHtml {
  const titleId = `message-${m.id}-title`;
  return html`
<article class="card" id="message-${m.id}" aria-labelledby="${titleId}">
  <h3 id="${titleId}">${m.direction === 'outbound' ? 'Agent reply' : 'Customer'}: ${sender(m)}</h3>
  <p>
    ${time(m.sentAt ?? m.receivedAt)} · <span class="badge">${m.status}</span>
    ${m.classification !== 'normal' ? html` · <span class="badge badge-bad">${m.classification}</span>` : ''}
    ${m.skipReason ? html` · skipped: ${m.skipReason}${m.skipDetail ? ` (${m.skipDetail})` : ''}` : ''}
    ${m.authDmarc === 'fail' ? html` · <span class="badge badge-bad">DMARC failed</span>` : ''}
    · To ${m.toAddresses.join(', ') || 'nobody'}
  </p>
  ${mailText(maskText(m.extractedText) || '(no new text)')}
  ${m.attachments.length > 0 ? html`<h4>Attachments</h4>${list(m.attachments.map(attachmentLine))}` : ''}
  <p><a href="/messages/${m.id}/original" aria-describedby="${titleId}">Full original</a></p>
</article>`;
}

const VERDICT_BADGE: Record<FactInclusion['verdict'], string> = { included: 'badge-ok', 'left-out': '', withheld: 'badge-bad' };

/** Why each profile fact was or was not in the last turn's prompt, and the tags it ordered them by. */
function factTraceSection(trace: ContextTrace | null): SafeHtml {
  if (!trace) return html`<h3>Profile facts in the last prompt</h3><p class="muted">No turn has recorded its profile yet.</p>`;
  return html`<h3 id="fact-trace-title">Profile facts in the last prompt</h3>
  <p>Tags the last turn ordered them by: ${trace.tags.length ? tagLinks(trace.tags) : html`<span class="muted">none</span>`}</p>
  ${
    trace.facts.length === 0
      ? html`<p class="muted">The customer's profile held no facts.</p>`
      : html`<div class="table-wrap"><table aria-labelledby="fact-trace-title">
    <thead><tr><th scope="col">Fact</th><th scope="col">Value</th><th scope="col">In the prompt</th><th scope="col">Why</th></tr></thead>
    <tbody>${trace.facts.map(
      (f) => html`<tr class="fact-trace-row">
        <td>${f.key}${f.origin !== 'email' ? html` <span class="muted">(${f.origin})</span>` : ''}</td><td>${f.value}</td>
        <td><span class="badge ${VERDICT_BADGE[f.verdict]}">${f.verdict}</span></td><td>${f.reason}</td>
      </tr>`,
    )}</tbody></table></div>`
  }`;
}

export async function threadPage(c: ConsoleContext): Promise<Response> {
  const threadId = readParam(c, 'id');
  const { db, now } = c.get('runtime');
  // One wait for all five reads: for an unknown id the other four find nothing.
  const [thread, messages, drafts, turns, commitments] = await Promise.all([
    loadThreadDetail(db, threadId),
    threadMessages(db, threadId),
    threadDraftCards(db, threadId),
    threadTurns(db, threadId),
    listCommitments(db, now(), { threadId, includeClosed: true, limit: 50 }),
  ]);
  if (!thread) throw new AppError('NOT_FOUND', 'no such thread (it may have been erased)');
  const session = c.get('session');
  // The thread's own mailbox decides (a mailbox no longer served: its drafts cannot be sent from here).
  const canSend = Boolean(c.get('runtime').mailboxes.find((m) => m.mailbox.id === thread.mailbox.id)?.settings.smtp.host);
  const { tags } = thread;
  const lastPrompt = turns.findLast((t) => t.prompt)?.prompt ?? null;
  const buffer = lastPrompt ? bufferSectionOf(lastPrompt) : null;
  const lastTrace = turns.findLast((t) => t.contextTrace)?.contextTrace ?? null;

  const body = html`
<h1>${thread.subject || '(no subject)'}</h1>
<p>
  Customer <a href="/customers/${thread.customer.id}">${thread.customer.name ?? thread.customer.key}</a>
  · to <a href="/drafts?mailbox=${encodeURIComponent(thread.mailbox.address)}" id="thread-mailbox">${thread.mailbox.address}</a>
  · <span class="badge">${thread.status}</span> · last message ${time(thread.lastMessageAt)}
  ${thread.linkedThreadId ? html` · linked to <a href="/threads/${thread.linkedThreadId}">an earlier thread</a>` : ''}
</p>
${thread.handoffAt ? html`<p class="notice notice-warning">Handed to a person ${time(thread.handoffAt)}: ${thread.handoffReason ?? ''}</p>` : ''}
${thread.promotionFailedAt ? html`<p class="notice notice-error">Promotion into the profile failed for good ${time(thread.promotionFailedAt)}: ${thread.promotionError ?? ''}. New mail in the thread tries again; <code>support-agent promote</code> tries now.</p>` : ''}
<section aria-labelledby="state-title" class="card">
  <h2 id="state-title">Thread state</h2>
  <dl class="facts">
    <dt>Summary</dt><dd>${thread.summary || html`<span class="muted">none yet</span>`}</dd>
    <dt>Pinned items</dt><dd>${thread.pinnedItems.length ? list(thread.pinnedItems) : html`<span class="muted">none</span>`}</dd>
    <dt>Open items</dt><dd>${list(thread.openItems)}</dd>
    <dt>Intent</dt><dd>${thread.currentIntent || html`<span class="muted">unknown</span>`}</dd>
    <dt>Tags</dt><dd>${tags.length ? tagLinks(tags) : html`<span class="muted">none</span>`}</dd>
    <dt>Status</dt><dd>${thread.status}${thread.closedAt ? html` (closed ${time(thread.closedAt)})` : ''}</dd>
    <dt>Topic</dt><dd>${thread.topic ?? html`<span class="muted">not promoted yet</span>`}</dd>
    <dt>Participants</dt><dd>${thread.participants.join(', ') || html`<span class="muted">none</span>`}</dd>
  </dl>
  <h3>Recent exchanges the last turn carried</h3>
  ${buffer ? mailText(buffer) : html`<p class="muted">none (a new thread, the buffer turned off, or the notes withheld)</p>`}
  ${factTraceSection(lastTrace)}
  <form method="post" action="/threads/${thread.id}/promote" class="actions">${csrfField(session)}
    <button type="submit">Promote now</button>
    <span class="muted">Reviews the customer's messages no promotion pass has seen yet and updates the profile under the written policy.</span>
  </form>
</section>
<section aria-labelledby="commitments-title">
  <h2 id="commitments-title">Commitments (${commitments.length})</h2>
  ${commitments.length === 0 ? html`<p class="muted">Nothing promised in this thread.</p>` : commitmentsTable(commitments, 'Commitments of this thread')}
</section>
<section aria-labelledby="messages-title">
  <h2 id="messages-title">Messages (${messages.length})</h2>
  ${messages.map(messageCard)}
</section>
<section aria-labelledby="replies-title">
  <h2 id="replies-title">Replies (${drafts.length})</h2>
  ${drafts.length === 0 ? html`<p class="muted">No replies drafted.</p>` : drafts.map((d) => draftCard(d, session, 'thread', canSend, 3))}
</section>
<section aria-labelledby="turns-title">
  <h2 id="turns-title">Turns (${turns.length})</h2>
  ${
    turns.length === 0
      ? html`<p class="muted">No turns yet.</p>`
      : html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col">Model</th><th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th></tr></thead>
    <tbody>${turns.map(
      (t) => html`<tr id="turn-${t.id}">
        <td>${time(t.startedAt)}</td><td>${t.status}${t.error ? html`<br><span class="muted">${t.error}</span>` : ''}</td>
        <td>${t.provider ?? ''} ${t.model ?? ''}</td><td>${t.promptTokens}</td><td>${t.completionTokens}</td>
      </tr>`,
    )}</tbody></table></div>
    ${turns.map((t, i) =>
      t.prompt
        ? html`<details class="prompt"><summary>Prompt of turn ${i + 1} (${t.promptTokens} tokens)</summary>${mailText(t.prompt)}</details>`
        : '',
    )}`
  }
</section>`;
  return c.html(renderPage({ title: thread.subject || 'Thread', section: null, session, notice: readNotice(c), body }));
}

/** "Promote now": an operator's checkpoint, run by the worker (the page does not wait for the model). */
export async function promoteThreadAction(c: ConsoleContext): Promise<Response> {
  const threadId = readParam(c, 'id');
  const runtime = c.get('runtime');
  if (!(await threadOwner(runtime.db, threadId))) throw new AppError('NOT_FOUND', 'no such thread (it may have been erased)');
  await runtime.pipeline().promotionRequested(threadId);
  return c.redirect(`/threads/${threadId}?notice=promotion-queued`, 303);
}

/**
 * The message as received (or, for the agent's replies, as composed), shown as text with its
 * sensitive values masked; the download below keeps the bytes as they arrived.
 */
export async function originalMessagePage(c: ConsoleContext): Promise<Response> {
  const id = readParam(c, 'id');
  const { db } = c.get('runtime');
  const message = await loadOriginalMessage(db, id);
  if (!message) throw new AppError('NOT_FOUND', 'no such message (it may have been erased)');
  const { raw } = message;
  const text = raw ? raw.subarray(0, RAW_DISPLAY_LIMIT).toString('utf8') : message.bodyText;
  const body = html`
<h1>Original message</h1>
<p>
  ${message.threadId ? html`<a href="/threads/${message.threadId}#message-${message.id}">Back to the thread</a> · ` : ''}
  ${sender(message)} · ${time(message.sentAt ?? message.receivedAt)} · Message-ID ${message.messageId}
  ${raw ? html` · <a href="/messages/${message.id}/original.eml" download>Download .eml (${size(raw.length)})</a>` : ''}
</p>
${raw ? '' : html`<p class="muted">The agent composed this message; its full text is shown.</p>`}
${raw && raw.length > RAW_DISPLAY_LIMIT ? html`<p class="muted">Showing the first ${size(RAW_DISPLAY_LIMIT)}; download the file for the rest.</p>` : ''}
${mailText(maskText(text))}`;
  return c.html(renderPage({ title: 'Original message', section: null, session: c.get('session'), body }));
}

/** The raw bytes as a download; `nosniff` and an attachment disposition keep browsers from rendering it. */
export async function originalMessageDownload(c: ConsoleContext): Promise<Response> {
  const id = readParam(c, 'id');
  const raw = await loadRawMessage(c.get('runtime').db, id);
  if (!raw) throw new AppError('NOT_FOUND', 'no original stored for this message');
  return new Response(raw, {
    headers: {
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': `attachment; filename="${id}.eml"`,
    },
  });
}
