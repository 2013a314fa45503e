/**
 * Is the agent working? Queue depths and recent failures, the IMAP poller per mailbox, the
 * outbox by draft status, and LLM token usage per day. Bull Board (under /health/queues) has
 * the job-level detail.
 */
import type { Queue } from 'bullmq';
import { describeError } from '../../errors.ts';
import { draftStatusCounts, llmUsageByDay, mailboxStatuses } from '../../store/health.ts';
import { draftStatusLabel } from '../draft-list.ts';
import type { ConsoleContext } from '../context.ts';
import { html, time, type SafeHtml } from '../html.ts';
import { renderPage } from '../layout.ts';

const USAGE_DAYS = 14;
/** A health page must answer even when Redis does not (the runtime's client waits out restarts). */
const REDIS_TIMEOUT_MS = 2_000;

const COUNT_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed'] as const;

interface QueueHealth {
  name: string;
  counts: Record<string, number>;
  failures: Array<{ id: string; name: string; reason: string; at: Date | null; attempts: number }>;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Redis within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function queueHealth(queue: Queue): Promise<QueueHealth> {
  const [counts, failed] = await Promise.all([queue.getJobCounts(...COUNT_STATES), queue.getFailed(0, 4)]);
  return {
    name: queue.name,
    counts,
    failures: failed.map((job) => ({
      id: job.id ?? '?',
      name: job.name,
      reason: job.failedReason ?? '',
      at: job.finishedOn ? new Date(job.finishedOn) : null,
      attempts: job.attemptsMade,
    })),
  };
}

function queuesSection(queues: QueueHealth[] | string): SafeHtml {
  if (typeof queues === 'string') return html`<p class="notice notice-error" role="alert">Queues unavailable: ${queues}</p>`;
  return html`<div class="table-wrap"><table>
  <caption class="sr-only">Jobs per queue and state</caption>
  <thead><tr><th scope="col">Queue</th>${COUNT_STATES.map((s) => html`<th scope="col">${s}</th>`)}</tr></thead>
  <tbody>${queues.map((q) => html`<tr><th scope="row">${q.name}</th>${COUNT_STATES.map((s) => html`<td>${q.counts[s] ?? 0}</td>`)}</tr>`)}</tbody>
</table></div>
<h3>Recent failures</h3>
${
  queues.every((q) => q.failures.length === 0)
    ? html`<p>No failed jobs.</p>`
    : html`<ul>${queues.flatMap((q) =>
        q.failures.map(
          (f) => html`<li><strong>${q.name}</strong> job ${f.id} (${f.name}, ${f.attempts} attempt(s), ${time(f.at)}): ${f.reason}</li>`,
        ),
      )}</ul>`
}`;
}

/** Counts by what a reviewer reads: a discarded draft apart from a superseded or replaced one. */
function byLabel(rows: ReadonlyArray<{ status: string; outcome: string; count: number }>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of rows) {
    const { text } = draftStatusLabel(r.status, r.outcome);
    counts.set(text, (counts.get(text) ?? 0) + r.count);
  }
  return counts;
}

export async function healthPage(c: ConsoleContext): Promise<Response> {
  const runtime = c.get('runtime');
  const { db } = runtime;
  const since = new Date(Date.now() - USAGE_DAYS * 86_400_000);
  const queuesPromise = (async (): Promise<QueueHealth[] | string> => {
    try {
      const q = runtime.queues();
      return await withTimeout(Promise.all([q.turns, q.promotions, q.outbox].map(queueHealth)), REDIS_TIMEOUT_MS);
    } catch (error) {
      return describeError(error);
    }
  })();
  const [queues, mailboxes, draftStatuses, usage] = await Promise.all([
    queuesPromise,
    mailboxStatuses(db),
    draftStatusCounts(db),
    llmUsageByDay(db, since),
  ]);

  const body = html`
<h1>Health</h1>
<section aria-labelledby="queues-title">
  <h2 id="queues-title">Queues</h2>
  ${queuesSection(queues)}
  <p><a href="/health/queues">Open Bull Board for job details</a></p>
</section>
<section aria-labelledby="poller-title">
  <h2 id="poller-title">Mailbox poller</h2>
  ${runtime.imapConfigured ? '' : html`<p class="notice notice-warning">IMAP is not configured for this process (IMAP_HOST, IMAP_USER, and IMAP_PASSWORD or MAIL_AUTH=oauth2).</p>`}
  ${mailboxes.map(
    (m) => html`<article class="card" aria-labelledby="mailbox-${m.id}">
    <h3 id="mailbox-${m.id}">${m.address}</h3>
    <dl class="facts">
      <dt>Connected</dt><dd>${m.pollerConnected ? html`<span class="badge badge-ok">connected</span>` : html`<span class="badge badge-bad">not connected</span>`}</dd>
      <dt>Last seen</dt><dd>${time(m.pollerSeenAt)}</dd>
      <dt>Last error</dt><dd>${m.pollerLastError ?? html`<span class="muted">none</span>`}</dd>
      ${
        m.checkpoints.length === 0
          ? html`<dt>Folders</dt><dd class="muted">no checkpoint yet</dd>`
          : m.checkpoints.map(
              (cp) =>
                html`<dt>${cp.folder}</dt><dd>last UID ${cp.lastUid} (UIDVALIDITY ${cp.uidValidity}, updated ${time(cp.updatedAt)})</dd>`,
            )
      }
    </dl>
  </article>`,
  )}
</section>
<section aria-labelledby="outbox-title">
  <h2 id="outbox-title">Replies by status</h2>
  ${
    draftStatuses.length === 0
      ? html`<p class="muted">No replies yet.</p>`
      : html`<ul>${[...byLabel(draftStatuses)].map(([label, count]) => html`<li>${label}: ${count}</li>`)}</ul>`
  }
</section>
<section aria-labelledby="usage-title">
  <h2 id="usage-title">LLM token usage, last ${USAGE_DAYS} days</h2>
  ${
    usage.length === 0
      ? html`<p class="muted">No LLM calls recorded.</p>`
      : html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Day (UTC)</th><th scope="col">Purpose</th><th scope="col">Calls</th><th scope="col">Failed</th><th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th></tr></thead>
    <tbody>${usage.map(
      (u) =>
        html`<tr><td>${u.day}</td><td>${u.purpose}</td><td>${u.calls}</td><td>${u.failed}</td><td>${u.prompt}</td><td>${u.completion}</td></tr>`,
    )}</tbody></table></div>`
  }
</section>`;
  return c.html(renderPage({ title: 'Health', section: 'health', session: c.get('session'), body }));
}
