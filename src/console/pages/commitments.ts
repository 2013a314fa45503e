/**
 * What the support side promised: open and overdue commitments (or every one, closed included),
 * the most pressing first, each with its customer, thread and due date; an overdue one stands out.
 */
import { z } from 'zod';
import { listCommitments, type CommitmentRecord } from '../../store/commitments.ts';
import type { ConsoleContext } from '../context.ts';
import { readQuery } from '../forms.ts';
import { html, time, type SafeHtml } from '../html.ts';
import { readNotice, renderPage } from '../layout.ts';

const LIMIT = 300;
const SHOWS = ['open', 'overdue', 'all'] as const;
const query = z.object({ show: z.enum(SHOWS).optional() }).loose();

function dueCell(c: CommitmentRecord): SafeHtml {
  if (c.dueAt) return html`${time(c.dueAt)}${c.due ? html`<br><span class="muted">written "${c.due}"</span>` : ''}`;
  return c.due ? html`"${c.due}" <span class="muted">(not a date)</span>` : html`<span class="muted">none</span>`;
}

function statusCell(c: CommitmentRecord): SafeHtml {
  const badge = c.status === 'overdue' ? 'badge badge-bad' : 'badge';
  return html`<span class="${badge}">${c.status}</span>${
    c.closedByMessageId
      ? html`<br><span class="muted">closed by ${c.closedByMessageId}</span>${c.closeEvidence ? html`<br><q>${c.closeEvidence}</q>` : ''}`
      : ''
  }`;
}

/** The rows of a commitments table (also used on a customer's page). */
export function commitmentsTable(commitments: readonly CommitmentRecord[], caption: string): SafeHtml {
  return html`<div class="table-wrap"><table>
  <caption class="sr-only">${caption}</caption>
  <thead><tr><th scope="col">Promise</th><th scope="col">Due</th><th scope="col">Status</th><th scope="col">Customer</th><th scope="col">Thread</th><th scope="col">Promised</th></tr></thead>
  <tbody>${commitments.map(
    (c) => html`<tr id="commitment-${c.id}"${c.status === 'overdue' ? html` class="overdue"` : ''}>
      <td>${c.text}</td><td>${dueCell(c)}</td><td>${statusCell(c)}</td>
      <td><a href="/customers/${c.entityId}">${c.customer ?? c.entityId}</a></td>
      <td><a href="/threads/${c.threadId}">${c.subject || '(no subject)'}</a></td>
      <td>${time(c.createdAt)}</td>
    </tr>`,
  )}</tbody></table></div>`;
}

export async function commitmentsPage(c: ConsoleContext): Promise<Response> {
  const { show = 'open' } = readQuery(c, query);
  const { db, now } = c.get('runtime');
  const commitments = await listCommitments(db, now(), { overdue: show === 'overdue', includeClosed: show === 'all', limit: LIMIT });
  const overdue = commitments.filter((m) => m.status === 'overdue').length;
  const label = { open: 'Open and overdue', overdue: 'Overdue', all: 'All' }[show];
  const body = html`
<h1>Commitments</h1>
<p>What the support side promised a customer, from the agent's drafts and the team's replies. A promise past its due date is
<strong>overdue</strong>: the next reply in its thread goes to a person. It closes when a later message shows it was kept.</p>
<nav aria-label="Which commitments"><ul class="inline-list">${SHOWS.map(
    (s) =>
      html`<li><a href="/commitments?show=${s}"${s === show ? html` aria-current="page"` : ''}>${{ open: 'Open', overdue: 'Overdue', all: 'All' }[s]}</a></li>`,
  )}</ul></nav>
<h2>${label} (${commitments.length}${overdue > 0 && show !== 'overdue' ? `, ${overdue} overdue` : ''})</h2>
${commitments.length === 0 ? html`<p class="muted">No commitments here.</p>` : commitmentsTable(commitments, `${label} commitments`)}`;
  return c.html(renderPage({ title: 'Commitments', section: 'commitments', session: c.get('session'), notice: readNotice(c), body }));
}
