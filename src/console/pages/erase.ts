/**
 * Erasing a customer, behind a confirmation step: the operator sees what will go and types the
 * customer's key or one of their addresses, so a stray click or a replayed form cannot erase.
 */
import { z } from 'zod';
import { eraseCustomer } from '../../app/erase-customer.ts';
import { AppError } from '../../errors.ts';
import type { ConsoleContext } from '../context.ts';
import { csrfField } from '../csrf.ts';
import { readForm, readParam } from '../forms.ts';
import { html } from '../html.ts';
import { readNotice, renderPage } from '../layout.ts';

async function loadEntity(c: ConsoleContext, entityId: string) {
  const entity = await c.get('runtime').db.entity.findUnique({
    where: { id: entityId },
    include: {
      addresses: { select: { address: true }, orderBy: { address: 'asc' } },
      _count: { select: { threads: true, messages: true, facts: true, decisions: true } },
    },
  });
  if (!entity) throw new AppError('NOT_FOUND', 'no such customer (they may have been erased already)');
  return entity;
}

export async function eraseConfirmPage(c: ConsoleContext): Promise<Response> {
  const entity = await loadEntity(c, readParam(c, 'id'));
  const name = entity.name ?? entity.key;
  const counts = entity._count;
  const body = html`
<h1>Erase ${name}?</h1>
<p>This permanently deletes, from the database and the job queues:</p>
<ul>
  <li>the profile: ${counts.facts} fact record(s) and ${counts.decisions} decision(s)</li>
  <li>${counts.threads} thread(s) with every message, draft and turn in them, and ${counts.messages} message(s) this customer sent</li>
  <li>the addresses ${entity.addresses.map((a) => a.address).join(', ') || 'none'}</li>
</ul>
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
  const accepted = [entity.key, ...entity.addresses.map((a) => a.address)].map((s) => s.toLowerCase());
  if (!accepted.includes(confirm)) return c.redirect(`/customers/${entityId}/erase?notice=erase-mismatch`, 303);
  const runtime = c.get('runtime');
  const report = await eraseCustomer(runtime.db, runtime.queues(), entityId);
  runtime.logger.info('customer erased in the console', { entityId, threads: report.threads, messages: report.messages, jobs: report.jobs });
  return c.redirect('/customers?notice=erased', 303);
}
