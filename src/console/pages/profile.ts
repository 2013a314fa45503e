/**
 * A customer's durable profile and why it says what it says: active facts with confidence,
 * source, evidence and expiry; past threads; open commitments; the full promotion decision trail.
 * An operator corrects, deletes or sets facts here (recorded in the trail as operator changes).
 */
import { z } from 'zod';
import { linkAddress } from '../../app/link-address.ts';
import { correctFact, deleteFact, setTrustedFact } from '../../app/profile-admin.ts';
import { normaliseAddress } from '../../mail/addresses.ts';
import { AppError } from '../../errors.ts';
import { isProtectedKey } from '../../memory/promotion-policy.ts';
import { FACT_CATEGORIES } from '../../memory/types.ts';
import { listCommitments } from '../../store/commitments.ts';
import { customerExists, customerThreads, loadCustomer } from '../../store/customers.ts';
import { listDecisions } from '../../store/decision-trail.ts';
import { customerFacts, findFact, type ProfileFactRecord } from '../../store/facts.ts';
import { messagesByMessageId } from '../../store/thread-view.ts';
import type { ConsoleContext, Session } from '../context.ts';
import { csrfField } from '../csrf.ts';
import { formText, readForm, readParam } from '../forms.ts';
import { html, time, type SafeHtml } from '../html.ts';
import { readNotice, renderPage } from '../layout.ts';
import { commitmentsTable } from './commitments.ts';
import { importFactsForm } from './import-facts.ts';

const ACTOR = 'console';
const THREAD_LIMIT = 100;
const DECISION_LIMIT = 300;

/** Facts name their source by RFC Message-ID; this finds our row for a link. */
type SourceLinks = Map<string, { id: string; threadId: string | null }>;

function sourceCell(fact: ProfileFactRecord, sources: SourceLinks): SafeHtml {
  const source = fact.sourceMessageId ? sources.get(fact.sourceMessageId) : undefined;
  if (source?.threadId) return html`<a href="/threads/${source.threadId}#message-${source.id}">message ${fact.sourceMessageId}</a>`;
  if (fact.sourceThreadId)
    return html`<a href="/threads/${fact.sourceThreadId}">thread</a>${fact.sourceMessageId ? html` (${fact.sourceMessageId})` : ''}`;
  return html`${fact.sourceMessageId ?? fact.origin}`;
}

function factCard(fact: ProfileFactRecord, sources: SourceLinks, session: Session, protectedKey: boolean): SafeHtml {
  const titleId = `fact-${fact.id}-title`;
  return html`
<article class="card" id="fact-${fact.id}" aria-labelledby="${titleId}">
  <h3 id="${titleId}">${fact.key}: ${fact.value}</h3>
  <dl class="facts">
    <dt>Category</dt><dd>${fact.category}${protectedKey ? html` <span class="badge">protected</span>` : ''}</dd>
    <dt>Confidence</dt><dd>${fact.confidence.toFixed(2)}</dd>
    <dt>Origin</dt><dd>${fact.origin}</dd>
    <dt>Source</dt><dd>${sourceCell(fact, sources)}</dd>
    <dt>Evidence</dt><dd>${fact.evidence ? html`<q>${fact.evidence}</q>` : html`<span class="muted">none</span>`}</dd>
    <dt>Since</dt><dd>${time(fact.createdAt)}</dd>
    <dt>Expires</dt><dd>${fact.expiresAt ? time(fact.expiresAt) : 'never'}</dd>
  </dl>
  <div class="actions">
    <form method="post" action="/facts/${fact.id}/correct" class="inline-form">${csrfField(session)}
      <div><label for="correct-${fact.id}">Correct ${fact.key}</label>
      <input type="text" id="correct-${fact.id}" name="value" value="${fact.value}" required maxlength="500"></div>
      <button type="submit">Save correction</button>
    </form>
    <form method="post" action="/facts/${fact.id}/delete">${csrfField(session)}
      <button type="submit" class="danger" aria-describedby="${titleId}">Delete fact</button>
    </form>
  </div>
</article>`;
}

function setFactForm(entityId: string, knownKeys: readonly string[], session: Session): SafeHtml {
  return html`
<form method="post" action="/customers/${entityId}/facts" class="card">
  ${csrfField(session)}
  <p class="muted">Operator facts are trusted: this is one of only two ways (with an import) to set protected keys such as account_tier.</p>
  <label for="fact-key">Key (snake_case)</label>
  <input type="text" id="fact-key" name="key" list="known-keys" required maxlength="60" pattern="[a-z0-9]+(_[a-z0-9]+)*" autocomplete="off">
  <datalist id="known-keys">${knownKeys.map((k) => html`<option value="${k}"></option>`)}</datalist>
  <label for="fact-value">Value</label>
  <input type="text" id="fact-value" name="value" required maxlength="500">
  <label for="fact-category">Category</label>
  <select id="fact-category" name="category">
    <option value="">from the policy</option>
    ${FACT_CATEGORIES.map((cat) => html`<option value="${cat}">${cat}</option>`)}
  </select>
  <label for="fact-expires">Expires on (optional)</label>
  <input type="date" id="fact-expires" name="expires">
  <div class="actions"><button type="submit" class="primary">Set fact</button></div>
</form>`;
}

export async function profilePage(c: ConsoleContext): Promise<Response> {
  const entityId = readParam(c, 'id');
  const { db, policy, mailbox, now } = c.get('runtime');
  // One wait for all five reads: for an unknown id the other four find nothing.
  const [entity, facts, threads, commitments, decisions] = await Promise.all([
    loadCustomer(db, entityId),
    customerFacts(db, entityId),
    customerThreads(db, entityId, THREAD_LIMIT),
    listCommitments(db, now(), { entityId, includeClosed: true, limit: 100 }),
    listDecisions(db, entityId, { order: 'newest-first', limit: DECISION_LIMIT }),
  ]);
  if (!entity) throw new AppError('NOT_FOUND', 'no such customer (they may have been erased)');
  const sourceIds = [...new Set(facts.map((f) => f.sourceMessageId).filter((id): id is string => id !== null))];
  const sourceRows = await messagesByMessageId(db, mailbox.id, sourceIds);
  const sources: SourceLinks = new Map(sourceRows.map((m) => [m.messageId, { id: m.id, threadId: m.threadId }]));
  const active = facts.filter((f) => f.status === 'active');
  const history = facts.filter((f) => f.status !== 'active');
  const knownKeys = [...new Set([...Object.keys(policy.keys), ...policy.protectedKeys.keys])].sort();
  const session = c.get('session');
  const name = entity.name ?? entity.key;

  const body = html`
<h1>${name}</h1>
<p>${entity.kind === 'domain' ? 'Customer domain' : 'Customer'} · key ${entity.key} · since ${time(entity.createdAt)}</p>
<p>Addresses: ${entity.addresses.join(', ') || html`<span class="muted">none</span>`}</p>
<details>
  <summary>Link another address of this customer</summary>
  <form method="post" action="/customers/${entity.id}/link" class="card">${csrfField(session)}
    <p class="muted">Mail from that address then joins this profile. If it had a profile of its own, the two are merged by the written
    policy (rule <code>merged-on-link</code>, shown in the decision trail).</p>
    <label for="link-address">Email address</label>
    <input type="email" id="link-address" name="address" required maxlength="320" autocomplete="off">
    <div class="actions"><button type="submit">Link address</button></div>
  </form>
</details>

<section aria-labelledby="facts-title" id="facts">
  <h2 id="facts-title">Active facts (${active.length})</h2>
  ${active.length === 0 ? html`<p class="muted">No active facts.</p>` : active.map((f) => factCard(f, sources, session, isProtectedKey(policy, f.key)))}
  <details${active.length === 0 ? html` open` : ''}>
    <summary>Set a fact (including protected facts)</summary>
    ${setFactForm(entity.id, knownKeys, session)}
  </details>
  <details>
    <summary>Import facts from a file</summary>
    ${importFactsForm(session, c.get('runtime').config.knowledge.uploadMaxBytes)}
  </details>
  ${
    history.length === 0
      ? ''
      : html`<details><summary>Earlier values (${history.length})</summary>
    <ul>${history.map((f) => html`<li>${f.key}: ${f.value} <span class="badge">${f.status}</span> (${f.origin}, until ${time(f.validUntil)})</li>`)}</ul>
  </details>`
  }
</section>

<section aria-labelledby="threads-title">
  <h2 id="threads-title">Threads (${threads.length})</h2>
  <form method="post" action="/customers/${entity.id}/promote" class="actions">${csrfField(session)}
    <button type="submit">Promote now</button>
    <span class="muted">Reviews every thread's messages no promotion pass has seen yet.</span>
  </form>
  ${
    threads.length === 0
      ? html`<p class="muted">No threads.</p>`
      : html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Subject</th><th scope="col">Topic</th><th scope="col">Status</th><th scope="col">Last message</th></tr></thead>
    <tbody>${threads.map(
      (
        t,
      ) => html`<tr><td><a href="/threads/${t.id}">${t.subject || '(no subject)'}</a></td><td>${t.topic ?? html`<span class="muted">not promoted yet</span>`}</td>
      <td>${t.status}</td><td>${time(t.lastMessageAt)}</td></tr>`,
    )}</tbody></table></div>`
  }
</section>

<section aria-labelledby="commitments-title">
  <h2 id="commitments-title">Commitments (${commitments.filter((m) => m.status === 'open' || m.status === 'overdue').length} outstanding)</h2>
  ${commitments.length === 0 ? html`<p class="muted">Nothing promised yet.</p>` : commitmentsTable(commitments, 'Commitments to this customer')}
</section>

<section aria-labelledby="trail-title">
  <h2 id="trail-title">Decision trail (${decisions.length})</h2>
  <p class="muted">Every candidate fact and operator change, accepted or rejected, with the rule that decided it. Newest first.</p>
  ${
    decisions.length === 0
      ? html`<p class="muted">No decisions yet.</p>`
      : html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">When</th><th scope="col">Decision</th><th scope="col">Fact</th><th scope="col">Rule</th><th scope="col">Origin</th><th scope="col">Evidence</th></tr></thead>
    <tbody>${decisions.map(
      (d) => html`<tr id="decision-${d.id}">
        <td>${time(d.createdAt)}</td>
        <td class="${d.accepted ? 'accepted' : 'rejected'}">${d.accepted ? 'accepted' : 'rejected'}</td>
        <td>${d.key} = ${d.value}<br><span class="muted">${d.category}, confidence ${d.confidence.toFixed(2)}${d.explicit ? ', stated explicitly' : ''}</span></td>
        <td><strong>${d.rule}</strong><br>${d.reason}</td>
        <td>${d.origin}${d.run ? html`<br><a href="/threads/${d.run.threadId}">thread</a> (${d.run.trigger})` : ''}</td>
        <td>${d.evidence ? html`<q>${d.evidence}</q>` : ''}${d.sourceMessageId ? html`<br><span class="muted">${d.sourceMessageId}</span>` : ''}</td>
      </tr>`,
    )}</tbody></table></div>`
  }
</section>

<section aria-labelledby="erase-title">
  <h2 id="erase-title">Erase</h2>
  <p>Erasing deletes this customer's profile, threads, messages, drafts, decisions and queued jobs. It cannot be undone.</p>
  <p><a class="button" href="/customers/${entity.id}/erase">Erase this customer…</a></p>
</section>`;
  return c.html(renderPage({ title: name, section: 'customers', session, notice: readNotice(c), body }));
}

/** "Promote now" for a customer: an operator's checkpoint on each of their threads, run by the worker. */
export async function promoteCustomerAction(c: ConsoleContext): Promise<Response> {
  const entityId = readParam(c, 'id');
  const runtime = c.get('runtime');
  if (!(await customerExists(runtime.db, entityId))) throw new AppError('NOT_FOUND', 'no such customer');
  const threads = await customerThreads(runtime.db, entityId, THREAD_LIMIT);
  const pipeline = runtime.pipeline();
  for (const thread of threads) await pipeline.promotionRequested(thread.id);
  return c.redirect(`/customers/${entityId}?notice=${threads.length === 0 ? 'nothing-to-promote' : 'promotion-queued'}`, 303);
}

const linkSchema = z.object({ address: z.string().trim().min(3).max(320) }).loose();

/** "Link another address": the CLI's `link`, with the same merge by the policy. */
export async function linkAddressAction(c: ConsoleContext): Promise<Response> {
  const entityId = readParam(c, 'id');
  const form = await readForm(c, linkSchema);
  const { db, policy } = c.get('runtime');
  if (!(await customerExists(db, entityId))) throw new AppError('NOT_FOUND', 'no such customer');
  const address = normaliseAddress(form.address);
  if (!address) throw new AppError('INPUT_INVALID', `"${form.address.slice(0, 80)}" is not an email address`);
  await linkAddress(db, policy, address, entityId);
  return c.redirect(`/customers/${entityId}?notice=address-linked`, 303);
}

const emptyToUndefined = (v: unknown) => (v === '' ? undefined : v);

const setFactSchema = z
  .object({
    key: z.string().trim().min(1).max(80),
    value: formText(500),
    category: z.preprocess(emptyToUndefined, z.enum(FACT_CATEGORIES as unknown as [string, ...string[]]).optional()),
    expires: z.preprocess(emptyToUndefined, z.iso.date().optional()),
  })
  .loose();

const correctSchema = z.object({ value: formText(500) }).loose();

export async function setFactAction(c: ConsoleContext): Promise<Response> {
  const entityId = readParam(c, 'id');
  const form = await readForm(c, setFactSchema);
  const { db, policy } = c.get('runtime');
  if (!(await customerExists(db, entityId))) throw new AppError('NOT_FOUND', 'no such customer');
  // A date means "valid through that day" (UTC).
  const expiresAt = form.expires ? new Date(`${form.expires}T23:59:59.999Z`) : null;
  await setTrustedFact(db, policy, entityId, {
    key: form.key,
    value: form.value,
    ...(form.category ? { category: form.category } : {}),
    expiresAt,
    origin: 'operator',
    actor: ACTOR,
  });
  return c.redirect(`/customers/${entityId}?notice=fact-set#facts`, 303);
}

/** The fact's customer, and whether the fact can still be changed (a second click finds it changed). */
async function factOwner(c: ConsoleContext, factId: string): Promise<{ entityId: string; active: boolean }> {
  const fact = await findFact(c.get('runtime').db, factId);
  if (!fact) throw new AppError('NOT_FOUND', 'no such fact');
  return { entityId: fact.entityId, active: fact.status === 'active' };
}

export async function correctFactAction(c: ConsoleContext): Promise<Response> {
  const factId = readParam(c, 'id');
  const form = await readForm(c, correctSchema);
  const { entityId, active } = await factOwner(c, factId);
  if (!active) return c.redirect(`/customers/${entityId}?notice=fact-stale#facts`, 303);
  const { db, policy } = c.get('runtime');
  await correctFact(db, policy, factId, form.value, ACTOR);
  return c.redirect(`/customers/${entityId}?notice=fact-corrected#facts`, 303);
}

export async function deleteFactAction(c: ConsoleContext): Promise<Response> {
  const factId = readParam(c, 'id');
  const { entityId, active } = await factOwner(c, factId);
  if (!active) return c.redirect(`/customers/${entityId}?notice=fact-stale#facts`, 303);
  await deleteFact(c.get('runtime').db, factId, ACTOR);
  return c.redirect(`/customers/${entityId}?notice=fact-deleted#facts`, 303);
}
