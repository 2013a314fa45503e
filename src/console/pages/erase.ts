/**
 * Erasing a customer, behind a confirmation step: the operator sees what will go and types the
 * customer's key or one of their addresses, so a stray click or a replayed form cannot erase.
 */
import { z } from 'zod';
import { describeErasure, eraseCustomer, type ErasureReport } from '../../app/erase-customer.ts';
import { AppError } from '../../errors.ts';
import { loadErasurePreview, type ErasurePreview } from '../../store/customers.ts';
import type { ConsoleContext } from '../context.ts';
import { csrfField } from '../csrf.ts';
import { readForm, readParam } from '../forms.ts';
import { html, type SafeHtml } from '../html.ts';
import { readNotice, renderPage } from '../layout.ts';

async function loadEntity(c: ConsoleContext, entityId: string): Promise<ErasurePreview> {
  const entity = await loadErasurePreview(c.get('runtime').db, entityId);
  if (!entity) throw new AppError('NOT_FOUND', 'no such customer (they may have been erased already)');
  return entity;
}

export async function eraseConfirmPage(c: ConsoleContext): Promise<Response> {
  const entity = await loadEntity(c, readParam(c, 'id'));
  const name = entity.name ?? entity.key;
  const counts = entity.counts;
  const body = html`
<h1>Erase ${name}?</h1>
<p>This permanently deletes, from the database and the job queues:</p>
<ul>
  <li>the profile: ${counts.facts} fact record(s) and ${counts.decisions} decision(s)</li>
  <li>${counts.threads} thread(s) with every message, draft and turn in them, and ${counts.messages} message(s) this customer sent</li>
  <li>the addresses ${entity.addresses.join(', ') || 'none'}</li>
</ul>
<p>Where other customers' mail, thread notes, drafts, prompts, facts or queued jobs mention these addresses or this
customer's names, the mention is redacted; their stored originals are rewritten.</p>
<p>Mail on the IMAP server itself belongs to the mailbox owner and is not touched.</p>
<form method="post" action="/customers/${entity.id}/erase" class="card">
  ${csrfField(c.get('session'))}
  <label for="erase-confirm">To confirm, type the customer's key: ${entity.key}</label>
  <input type="text" id="erase-confirm" name="confirm" required autocomplete="off" spellcheck="false">
  <div class="actions">
    <button type="submit" class="danger solid">Erase permanently</button>
    <a class="button" href="/customers/${entity.id}">Cancel</a>
  </div>
</form>`;
  return c.html(renderPage({ title: `Erase ${name}`, section: 'customers', session: c.get('session'), notice: readNotice(c), body }));
}

const confirmSchema = z.object({ confirm: z.string().trim().toLowerCase().max(400) }).loose();

export async function eraseAction(c: ConsoleContext): Promise<Response> {
  const entityId = readParam(c, 'id');
  const { confirm } = await readForm(c, confirmSchema);
  const entity = await loadEntity(c, entityId);
  const accepted = [entity.key, ...entity.addresses].map((s) => s.toLowerCase());
  if (!accepted.includes(confirm)) return c.redirect(`/customers/${entityId}/erase?notice=erase-mismatch`, 303);
  const runtime = c.get('runtime');
  const report = await eraseCustomer(runtime.db, runtime.queues(), entityId);
  runtime.logger.info('customer erased in the console', { entityId, summary: describeErasure(report).join(' ') });
  // The summary is shown once, in answer to the form; it holds counts only, never an erased value.
  const body = erasureSummary(report);
  return c.html(renderPage({ title: 'Erased', section: 'customers', session: c.get('session'), notice: 'erased', body }));
}

function erasureSummary(report: ErasureReport): SafeHtml {
  const rows = (counts: Record<string, number>, empty: string) => {
    const entries = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
    return entries.length === 0
      ? html`<p class="muted">${empty}</p>`
      : html`<table><thead><tr><th scope="col">Where</th><th scope="col">Rows</th></tr></thead>
<tbody>${entries.map(([where, n]) => html`<tr><td>${where}</td><td>${n}</td></tr>`)}</tbody></table>`;
  };
  const redis = report.redis;
  return html`
<h1>Erased ${report.entityId}</h1>
<p>${report.addresses} address(es) and ${report.names} name(s) were erased. Counts of what changed:</p>
<section aria-labelledby="erase-deleted"><h2 id="erase-deleted">Deleted</h2>${rows(report.deleted, 'Nothing.')}</section>
<section aria-labelledby="erase-redacted"><h2 id="erase-redacted">Redacted in other customers' data</h2>
${rows(report.redacted, 'No mentions found.')}</section>
<section aria-labelledby="erase-replaced"><h2 id="erase-replaced">Replaced whole</h2>${rows(report.replaced, 'Nothing.')}
${report.partsEmptied > 0 ? html`<p>${report.partsEmptied} attachment(s) inside stored originals were emptied.</p>` : ''}</section>
<section aria-labelledby="erase-redis"><h2 id="erase-redis">Job queues (Redis)</h2>
${
  redis
    ? html`<ul>
  <li>${redis.jobsRemoved} job(s) removed, ${redis.keysDeleted} key(s) deleted, ${redis.eventsRemoved} event(s) removed</li>
  <li>${redis.fieldsRedacted} job field(s), ${redis.logLinesRedacted} log line(s), ${redis.stringsRedacted} value(s) redacted</li>
  <li>${redis.keysScanned} key(s) scanned</li>
</ul>`
    : html`<p class="muted">Not reached.</p>`
}
</section>
<p><a href="/customers">Back to the customers</a></p>`;
}
