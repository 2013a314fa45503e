/**
 * Skipped mail: what the agent kept but did not answer (auto-replies, bounces, lists, loops,
 * too-large, malformed), with the reason and the signal that decided it, filterable by reason,
 * each linked to its raw source (shown escaped on the original-message page).
 */
import { z } from 'zod';
import { SKIP_REASONS, type SkipReason } from '../../mail/classify.ts';
import { listSkippedMail, type SkippedMessage } from '../../store/skipped-mail.ts';
import type { ConsoleContext } from '../context.ts';
import { readQuery } from '../forms.ts';
import { html, size, time, type SafeHtml } from '../html.ts';
import { readNotice, renderPage } from '../layout.ts';

const LIMIT = 200;
const query = z.object({ reason: z.enum(SKIP_REASONS as [SkipReason, ...SkipReason[]]).optional() }).loose();

/** What each reason means, for an operator who did not write the classifier. */
const MEANING: Record<SkipReason, string> = {
  'auto-reply': 'an out-of-office or other automatic answer',
  bounce: 'a delivery failure report',
  complaint: 'a spam complaint (feedback report)',
  'mailing-list': 'list or bulk mail',
  loop: "the agent's own mail coming back, or a sender replying too often",
  duplicate: 'the same message seen again',
  'no-sender': 'no usable sender address',
  malformed: 'could not be parsed',
  'too-large': 'over MAX_MESSAGE_BYTES: not parsed, the first bytes kept',
  'not-in-a-thread': "the team's sent mail that answers no thread the agent knows (or only another customer's)",
  'unverified-team': 'claims a team address without proof (no aligned DMARC pass): a stranger’s mail, for a person to look at',
  'not-team-mail': 'in the Sent folder, but not from a team address (a forward or a BCC copy)',
};

function sender(m: SkippedMessage): string {
  if (!m.fromAddress) return 'unknown sender';
  return m.fromName ? `${m.fromName} <${m.fromAddress}>` : m.fromAddress;
}

function reasonFilter(counts: Record<string, number>, current: SkipReason | undefined): SafeHtml {
  const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
  const link = (href: string, label: string, count: number, selected: boolean) =>
    html`<li><a href="${href}"${selected ? html` aria-current="true"` : ''}>${label} (${count})</a></li>`;
  return html`<nav aria-label="Filter by reason" class="filters"><ul>
  ${link('/skipped', 'All reasons', total, current === undefined)}
  ${SKIP_REASONS.filter((r) => counts[r] || r === current).map((r) => link(`/skipped?reason=${r}`, r, counts[r] ?? 0, r === current))}
</ul></nav>`;
}

export async function skippedPage(c: ConsoleContext): Promise<Response> {
  const { reason } = readQuery(c, query);
  const { messages, counts } = await listSkippedMail(c.get('runtime').db, { reason, limit: LIMIT });
  const body = html`
<h1>Skipped mail</h1>
<p>Mail the agent kept but did not answer, newest first. Open the raw source to see exactly what arrived.</p>
${reasonFilter(counts, reason)}
${
  messages.length === 0
    ? html`<p>${reason ? `No mail skipped as ${reason}.` : 'No skipped mail.'}</p>`
    : html`${messages.length === LIMIT ? html`<p class="muted">Showing the latest ${LIMIT}.</p>` : ''}<div class="table-wrap"><table>
  <caption class="sr-only">Skipped mail${reason ? `: ${reason}` : ''}</caption>
  <thead><tr><th scope="col">Received</th><th scope="col">From</th><th scope="col">Subject</th><th scope="col">Reason</th><th scope="col">Source</th></tr></thead>
  <tbody>${messages.map(
    (m) => html`<tr id="skipped-${m.id}">
      <td>${time(m.receivedAt)}</td>
      <td>${sender(m)}</td>
      <td>${m.subject || html`<span class="muted">(no subject)</span>`}</td>
      <td><span class="badge">${m.skipReason}</span> ${MEANING[m.skipReason as SkipReason] ?? ''}${m.skipDetail ? html`<br><span class="muted">${m.skipDetail}</span>` : ''}</td>
      <td><a href="/messages/${m.id}/original">Raw source<span class="sr-only"> of ${m.subject || 'this message'}</span></a> (${size(m.sizeBytes)})${m.threadId ? html`<br><a href="/threads/${m.threadId}#message-${m.id}">Thread</a>` : ''}</td>
    </tr>`,
  )}</tbody></table></div>`
}`;
  return c.html(renderPage({ title: 'Skipped mail', section: 'skipped', session: c.get('session'), notice: readNotice(c), body }));
}
