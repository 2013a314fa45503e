/**
 * How good the drafts are (the figures of `support-agent stats`): drafts by outcome, approval as
 * is, how much people changed the ones they edited, needs-human rate, time to draft, per intent
 * and per tag, and what the promotion policy decided. `?days=` picks the period (default 30).
 */
import { z } from 'zod';
import { loadQualityStats, newestAnsweredMailDate, statsPeriod, type OutcomeCounts } from '../../store/quality-stats.ts';
import type { ConsoleContext } from '../context.ts';
import { html, time, type SafeHtml } from '../html.ts';
import { renderPage } from '../layout.ts';

const query = z.object({ days: z.coerce.number().int().min(1).max(3650).catch(30).default(30) });

const pct = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(1)} %`);

function countsRow(label: string, c: OutcomeCounts): SafeHtml {
  const o = c.byOutcome;
  return html`<tr><th scope="row">${label}</th><td>${c.drafts}</td><td>${o['sent-as-is']}</td><td>${o['sent-edited']}</td><td>${o.replaced}</td><td>${o.discarded}</td><td>${o.superseded}</td><td>${o.pending}</td><td>${pct(c.approvalAsIsRate)}</td><td>${c.meanEditedSimilarity === null ? '–' : c.meanEditedSimilarity.toFixed(3)}</td><td>${pct(c.needsHumanRate)}</td></tr>`;
}

export async function qualityPage(c: ConsoleContext): Promise<Response> {
  const { days } = query.parse(c.req.query());
  const { db } = c.get('runtime');
  // By the dates of the mail the drafts answer; a replayed history ends at its newest mail, not today.
  const { since, until } = statsPeriod(days * 86_400_000, new Date(), await newestAnsweredMailDate(db));
  const stats = await loadQualityStats(db, since, until);
  const body = html`
<h1>Draft quality, last ${days} days</h1>
<p id="quality-period">Drafts answering mail dated ${time(since)} to ${time(until)}${
    until.getTime() < Date.now() - 86_400_000 ? ' (the newest mail’s date: a replayed or quiet history)' : ''
  }.</p>
<div class="table-wrap"><table>
  <caption class="sr-only">Drafts by outcome, overall, per intent and per tag</caption>
  <thead><tr><th scope="col"></th><th scope="col">Drafts</th><th scope="col">Sent as is</th><th scope="col">Sent edited</th><th scope="col">Replaced</th><th scope="col">Discarded</th><th scope="col">Superseded</th><th scope="col">Pending</th><th scope="col">Approval as is</th><th scope="col">Edit similarity</th><th scope="col">Needs human</th></tr></thead>
  <tbody>
    ${countsRow('All drafts', stats)}
    ${stats.perIntent.map((i) => countsRow(`Intent: ${i.intent}`, i))}
    ${stats.perTag.map((t) => countsRow(`Tag: ${t.tag}`, t))}
  </tbody>
</table></div>
<dl class="facts">
  <dt>Median time, customer mail to draft</dt><dd>${stats.medianSecondsToDraft === null ? '–' : `${stats.medianSecondsToDraft} s`}</dd>
  <dt>Threads resolved or closed</dt><dd>${stats.threadsResolved}</dd>
</dl>
<h2>Promotion decisions</h2>
${
  stats.promotionDecisions.length === 0
    ? html`<p class="muted">None in this period.</p>`
    : html`<ul>${stats.promotionDecisions.map((d) => html`<li>${d.verdict}: ${d.count} (${d.rule})</li>`)}</ul>`
}`;
  return c.html(renderPage({ title: 'Draft quality', section: 'quality', session: c.get('session'), body }));
}
