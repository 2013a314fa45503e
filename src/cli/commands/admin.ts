/**
 * The operator's commands: look at a profile or a thread, explain a fact, set trusted facts,
 * import them, link addresses, promote a thread by hand, erase a customer.
 */
import { describeErasure, eraseCustomer } from '../../app/erase-customer.ts';
import { importFacts } from '../../app/import-facts.ts';
import { linkAddress } from '../../app/link-address.ts';
import { createAppLogger } from '../../app/logging.ts';
import { requireEntity, setTrustedFact } from '../../app/profile-admin.ts';
import { promoteThread } from '../../app/promote-thread.ts';
import { openRuntime, type Runtime } from '../../app/runtime.ts';
import { loadConfig } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { normaliseAddress } from '../../mail/addresses.ts';
import { renderProfileView } from '../../memory/profile-view.ts';
import { loadCustomer } from '../../store/customers.ts';
import { listDecisions } from '../../store/decision-trail.ts';
import { activeFacts } from '../../store/facts.ts';
import { loadProfile } from '../../store/profiles.ts';
import { loadThreadDetail, threadMessages, threadTurns } from '../../store/thread-view.ts';

async function withRuntime<T>(work: (runtime: Runtime) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const runtime = await openRuntime(config, createAppLogger(config.logLevel === 'info' ? { ...config, logLevel: 'warn' } : config));
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}

const print = (value: unknown) => process.stdout.write(typeof value === 'string' ? value + '\n' : JSON.stringify(value, null, 2) + '\n');

export function runProfile(ref: string): Promise<void> {
  return withRuntime(async ({ db }) => {
    const entity = await requireEntity(db, ref);
    const [profile, customer, facts] = await Promise.all([
      loadProfile(db, entity.id),
      loadCustomer(db, entity.id),
      activeFacts(db, entity.id),
    ]);
    if (!profile || !customer) throw new AppError('NOT_FOUND', `no customer ${ref}`);
    print({
      ...renderProfileView(profile, new Date()),
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
        expires_at: f.expiresAt?.toISOString() ?? null,
      })),
    });
  });
}

export function runThread(threadId: string): Promise<void> {
  return withRuntime(async ({ db }) => {
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

export function runWhy(ref: string, key: string | undefined): Promise<void> {
  return withRuntime(async ({ db }) => {
    const entity = await requireEntity(db, ref);
    const decisions = await listDecisions(db, entity.id, { key, order: 'oldest-first' });
    if (decisions.length === 0) {
      print(key ? `No decisions about ${key} for ${entity.id}.` : `No decisions recorded for ${entity.id}.`);
      return;
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

export function runFactsSet(ref: string, key: string, value: string, options: { category?: string }): Promise<void> {
  return withRuntime(async ({ db, policy }) => {
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
  return withRuntime(async ({ db, policy, config }) => {
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
  return withRuntime(async ({ db }) => {
    const normalised = normaliseAddress(address);
    if (!normalised) throw new AppError('USAGE', `"${address}" is not an email address`);
    const entity = await requireEntity(db, target);
    const result = await linkAddress(db, normalised, entity.id);
    print(`${normalised} now belongs to ${entity.id}${result.merged ? ` (merged profile ${result.merged})` : ''}.`);
  });
}

export function runPromote(threadId: string): Promise<void> {
  return withRuntime(async (runtime) => {
    const outcome = await promoteThread(runtime.promotionDeps(), threadId, 'manual');
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
  return withRuntime(async (runtime) => {
    const entity = await requireEntity(runtime.db, ref);
    const report = await eraseCustomer(runtime.db, runtime.queues(), entity.id);
    print(options.json ? report : describeErasure(report).join('\n'));
  });
}
