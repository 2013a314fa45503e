/**
 * The operator's commands: look at a profile or a thread, explain a fact, set trusted facts,
 * import them, link addresses, promote a thread by hand, erase a customer.
 */
import { describeErasure, eraseCustomer } from '../../app/erase-customer.ts';
import { importFacts } from '../../app/import-facts.ts';
import { linkAddress } from '../../app/link-address.ts';
import { checkTrustedFactInput, requireEntity, setTrustedFact } from '../../app/profile-admin.ts';
import { promoteThread } from '../../app/promote-thread.ts';
import { AppError } from '../../errors.ts';
import { normaliseAddress } from '../../mail/addresses.ts';
import { renderProfileView } from '../../memory/profile-view.ts';
import { loadCustomer } from '../../store/customers.ts';
import { listDecisions } from '../../store/decision-trail.ts';
import { listCommitments } from '../../store/commitments.ts';
import { activeFacts, factsAsOf } from '../../store/facts.ts';
import { loadProfile } from '../../store/profiles.ts';
import { threadsWithTag } from '../../store/thread-tags.ts';
import { listMailboxes } from '../../store/mailboxes.ts';
import { loadThreadDetail, threadMessages, threadTurns } from '../../store/thread-view.ts';
import { withOperatorRuntime } from '../operator-runtime.ts';
import { output, servedRuntime } from '../output.ts';
import { progressReporter } from '../progress.ts';
import { loadQualityStats, newestAnsweredMailDate, statsPeriod } from '../../store/quality-stats.ts';
import { parseDurationWithUnit } from '../../duration.ts';
import { formatQualityStats } from './stats-table.ts';

const print = (value: unknown) => output().out(typeof value === 'string' ? value + '\n' : JSON.stringify(value, null, 2) + '\n');

/** `--as-of`: an ISO date or date-time (a bare date means the end of that day, UTC). */
export function parseAsOf(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const date = new Date(dateOnly ? `${text}T23:59:59.999Z` : text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(date.getTime())) {
    throw new AppError('USAGE', `--as-of: "${value.slice(0, 40)}" is not a date (use 2026-11-20 or 2026-11-20T09:00:00Z)`);
  }
  return date;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function runProfile(ref: string, options: { asOf?: string } = {}): Promise<void> {
  const asOf = parseAsOf(options.asOf);
  return withOperatorRuntime(async ({ db }) => {
    const entity = await requireEntity(db, ref);
    const [profile, customer, facts] = await Promise.all([
      loadProfile(db, entity.id, asOf),
      loadCustomer(db, entity.id),
      asOf ? factsAsOf(db, entity.id, asOf) : activeFacts(db, entity.id),
    ]);
    if (!profile || !customer) throw new AppError('NOT_FOUND', `no customer ${ref}`);
    print({
      ...(asOf ? { as_of: asOf.toISOString() } : {}),
      ...renderProfileView(profile, asOf ?? new Date()),
      addresses: customer.addresses,
      facts: facts.map((f) => ({
        key: f.key,
        value: f.value,
        category: f.category,
        confidence: f.confidence,
        origin: f.origin,
        source_message_id: f.sourceMessageId,
        source_thread_id: f.sourceThreadId,
        evidence: f.evidence,
        valid_from: iso(f.validFrom),
        recorded_at: iso(f.createdAt),
        // As of a date, a replacement recorded later was not known yet.
        valid_until: asOf && f.validUntil && (f.retiredAt ?? f.validUntil) > asOf ? null : iso(f.validUntil),
        expires_at: iso(f.expiresAt),
      })),
    });
  });
}

/** `support-agent stats [--since 30d] [--json]`: how good the drafts were (see quality-stats.ts). */
export function runStats(options: { since?: string; json?: boolean } = {}): Promise<void> {
  const ms = parseDurationWithUnit(options.since ?? '30d');
  if (ms === null)
    throw new AppError('USAGE', `--since: "${(options.since ?? '').slice(0, 40)}" is not a duration with a unit, like 7d, 72h or 2w`);
  return withOperatorRuntime(async ({ db, now }) => {
    // By the dates of the mail the drafts answer, ending at the newest one when that is earlier than now (a replayed history).
    const { since, until } = statsPeriod(ms, now(), await newestAnsweredMailDate(db));
    const stats = await loadQualityStats(db, since, until);
    print(options.json ? { ...stats, since: stats.since.toISOString(), until: until.toISOString() } : formatQualityStats(stats));
  });
}

export function runCommitments(options: { overdue?: boolean; all?: boolean; json?: boolean; customer?: string } = {}): Promise<void> {
  return withOperatorRuntime(async ({ db, now }) => {
    const entity = options.customer ? await requireEntity(db, options.customer) : null;
    const at = now();
    const commitments = await listCommitments(db, at, {
      overdue: options.overdue ?? false,
      includeClosed: options.all ?? false,
      ...(entity ? { entityId: entity.id } : {}),
    });
    if (options.json) {
      print(
        commitments.map((c) => ({
          id: c.id,
          customer: c.customer,
          entity_id: c.entityId,
          thread_id: c.threadId,
          subject: c.subject,
          text: c.text,
          due: c.due,
          due_at: iso(c.dueAt),
          status: c.status,
          source_message_id: c.sourceMessageId,
          promised_at: c.createdAt.toISOString(),
          closed_by_message_id: c.closedByMessageId,
          close_evidence: c.closeEvidence,
          resolved_at: iso(c.resolvedAt),
        })),
      );
      return;
    }
    if (commitments.length === 0) {
      print(options.overdue ? 'No overdue commitments.' : options.all ? 'No commitments.' : 'No open commitments.');
      return;
    }
    for (const c of commitments) {
      const due = c.dueAt ? `due ${c.dueAt.toISOString().slice(0, 10)}` : c.due ? `due "${c.due}"` : 'no due date';
      print(
        `${c.status.toUpperCase().padEnd(9)} ${due.padEnd(15)} ${c.customer ?? c.entityId}  ${JSON.stringify(c.text)}  (thread ${c.threadId})${
          c.closedByMessageId ? `  closed by ${c.closedByMessageId}` : ''
        }`,
      );
    }
  });
}

/** `threads --tag billing [--mailbox billing@…] [--status open]`: the threads carrying a tag, or of a mailbox, newest activity first. */
export function runThreads(options: { tag?: string; mailbox?: string; status?: string; json?: boolean }): Promise<void> {
  if (!options.tag && !options.mailbox)
    return Promise.reject(new AppError('USAGE', 'threads needs --tag <tag>, --mailbox <address>, or both'));
  return withOperatorRuntime(async ({ db }) => {
    let mailboxId: string | undefined;
    if (options.mailbox) {
      const known = await listMailboxes(db);
      mailboxId = known.find((m) => m.address === options.mailbox)?.id;
      if (!mailboxId)
        throw new AppError('NOT_FOUND', `no mailbox ${options.mailbox}; known: ${known.map((m) => m.address).join(', ') || 'none yet'}`);
    }
    const threads = await threadsWithTag(db, {
      tag: options.tag,
      ...(options.status ? { status: options.status } : {}),
      ...(mailboxId ? { mailboxId } : {}),
    });
    if (options.json) {
      print(
        threads.map((t) => ({
          thread_id: t.id,
          subject: t.subject,
          status: t.status,
          tags: t.tags,
          open_items: t.openItems,
          customer: t.customer.key,
          mailbox: t.mailbox,
          last_message_at: t.lastMessageAt.toISOString(),
        })),
      );
      return;
    }
    if (threads.length === 0) {
      const where = [options.tag ? `tagged ${options.tag}` : '', options.mailbox ? `in ${options.mailbox}` : ''].filter(Boolean).join(' ');
      print(`No ${options.status ? `${options.status} ` : ''}threads ${where}.`);
      return;
    }
    for (const t of threads) {
      print(
        `${t.status.toUpperCase().padEnd(8)} ${t.lastMessageAt.toISOString().slice(0, 10)}  ${t.customer.key}  ${options.mailbox ? '' : `${t.mailbox}  `}${JSON.stringify(t.subject)}  [${t.tags.join(', ')}]  (thread ${t.id})`,
      );
    }
  });
}

export function runThread(threadId: string): Promise<void> {
  return withOperatorRuntime(async ({ db }) => {
    const [thread, messages, turns] = await Promise.all([
      loadThreadDetail(db, threadId),
      threadMessages(db, threadId),
      threadTurns(db, threadId),
    ]);
    if (!thread) throw new AppError('NOT_FOUND', `no thread ${threadId}`);
    print({
      thread_id: thread.id,
      entity_id: thread.entityId,
      subject: thread.subject,
      status: thread.status,
      summary: thread.summary,
      open_items: thread.openItems,
      current_intent: thread.currentIntent,
      tags: thread.tags,
      pinned_items: thread.pinnedItems,
      topic: thread.topic,
      last_message_at: thread.lastMessageAt.toISOString(),
      linked_thread_id: thread.linkedThreadId,
      participants: thread.participants,
      messages: messages.map((m) => ({
        id: m.id,
        message_id: m.messageId,
        direction: m.direction,
        from: m.fromAddress,
        date: (m.sentAt ?? m.receivedAt).toISOString(),
        status: m.status,
        skip_reason: m.skipReason,
        text: m.extractedText,
      })),
      turns: turns.map((t) => ({
        id: t.id,
        status: t.status,
        prompt_tokens: t.promptTokens,
        completion_tokens: t.completionTokens,
        error: t.error,
      })),
    });
  });
}

export function runWhy(ref: string, key: string | undefined, options: { asOf?: string } = {}): Promise<void> {
  const asOf = parseAsOf(options.asOf);
  return withOperatorRuntime(async ({ db }) => {
    const entity = await requireEntity(db, ref);
    const decisions = await listDecisions(db, entity.id, { key, order: 'oldest-first', asOf });
    const by = asOf ? ` by ${asOf.toISOString()}` : '';
    if (decisions.length === 0) {
      print(key ? `No decisions about ${key} for ${entity.id}${by}.` : `No decisions recorded for ${entity.id}${by}.`);
      return;
    }
    if (asOf) {
      const held = (await factsAsOf(db, entity.id, asOf)).filter((f) => !key || f.key === key);
      print(
        `As of ${asOf.toISOString()} the profile held: ${held.length === 0 ? '(nothing)' : held.map((f) => `${f.key} = ${JSON.stringify(f.value)}`).join(', ')}`,
      );
    }
    for (const d of decisions) {
      print(
        [
          `${d.createdAt.toISOString()}  ${d.accepted ? 'ACCEPTED' : 'REJECTED'}  ${d.key} = ${JSON.stringify(d.value)}  (${d.category}, confidence ${d.confidence})`,
          `  rule: ${d.rule}: ${d.reason}`,
          `  origin: ${d.origin}${d.run ? ` (thread ${d.run.threadId}, ${d.run.trigger})` : ''}`,
          ...(d.sourceMessageId ? [`  message: ${d.sourceMessageId}`] : []),
          ...(d.evidence ? [`  evidence: ${JSON.stringify(d.evidence)}`] : []),
        ].join('\n'),
      );
    }
  });
}

export async function runFactsSet(ref: string, key: string, value: string, options: { category?: string }): Promise<void> {
  // Refused before the database is opened: a typo costs nothing.
  checkTrustedFactInput({ key, value, ...(options.category ? { category: options.category } : {}) });
  return withOperatorRuntime(async ({ db, policy }) => {
    const entity = await requireEntity(db, ref);
    const factId = await setTrustedFact(db, policy, entity.id, {
      key,
      value,
      ...(options.category ? { category: options.category } : {}),
      origin: 'operator',
      actor: 'cli',
    });
    print(`Set ${key} for ${entity.id} (fact ${factId}).`);
  });
}

export function runImport(file: string): Promise<void> {
  return withOperatorRuntime(async ({ db, policy, config }) => {
    const result = await importFacts(
      db,
      policy,
      { mode: config.entity.key, extraFreeMailDomains: config.entity.extraFreeMailDomains },
      file,
    );
    print(`Imported ${result.facts} fact(s) for ${result.customers} customer(s) from ${file}.`);
  });
}

export function runLink(address: string, target: string): Promise<void> {
  return withOperatorRuntime(async ({ db, policy }) => {
    const normalised = normaliseAddress(address);
    if (!normalised) throw new AppError('USAGE', `"${address}" is not an email address`);
    const entity = await requireEntity(db, target);
    const result = await linkAddress(db, policy, normalised, entity.id);
    print(`${normalised} now belongs to ${entity.id}${result.merged ? ` (merged profile ${result.merged})` : ''}.`);
    for (const r of result.retired)
      print(`  ${r.key} = ${JSON.stringify(r.value)} superseded: ${r.reason} (see \`support-agent why ${entity.id} ${r.key}\`)`);
  });
}

export function runPromote(threadId: string): Promise<void> {
  return withOperatorRuntime(async (runtime) => {
    const outcome = await promoteThread(runtime.promotionDeps(), threadId, 'operator');
    print(
      outcome.kind === 'promoted'
        ? `Promoted ${threadId}: ${outcome.accepted} fact(s) accepted, ${outcome.rejected} rejected (see \`support-agent why\`). Topic: ${outcome.topic ?? '(none)'}`
        : `Nothing to promote for ${threadId}.`,
    );
  });
}

/**
 * Erases a customer and prints what changed: rows deleted per table, rows redacted per column,
 * values replaced whole, and Redis by kind; counts only, never an erased value (`--json` for tools).
 */
export function runErase(ref: string, options: { yes?: boolean; json?: boolean }): Promise<void> {
  if (!options.yes) throw new AppError('USAGE', 'erase deletes everything about a customer; repeat with --yes to confirm');
  return withOperatorRuntime(async (runtime) => {
    const entity = await requireEntity(runtime.db, ref);
    // Steps (read, delete, redact columns, redact raw mail) on a terminal; a served command's reply stays the report alone.
    const progress =
      process.stderr.isTTY && servedRuntime() === null
        ? progressReporter({ label: 'erase', unit: 'steps', isTerminal: true, write: (text) => process.stderr.write(text) })
        : undefined;
    const report = await eraseCustomer(runtime.db, runtime.queues(), entity.id, progress);
    print(options.json ? report : describeErasure(report).join('\n'));
  });
}
