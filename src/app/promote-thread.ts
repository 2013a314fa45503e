/**
 * Promotion of one thread into its customer's profile: one `thread_promotion` call proposes
 * facts, the written policy decides each one, and every decision is stored with its rule.
 */
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import { trustedAsFactSource } from '../memory/disclosure.ts';
import { buildPromotionPrompt } from '../memory/promotion-prompt.ts';
import { decidePromotions, pendingFactId, type Decision, type PromotionPolicy, type SourceMessage } from '../memory/promotion-policy.ts';
import type { Db } from '../store/database.ts';
import { recordLlmCalls, loadThread } from '../store/turns.ts';

export type PromotionTrigger = 'quiet' | 'resolved' | 'manual' | 'replay-end';

export interface PromotionDeps {
  db: Db;
  provider: LlmProvider;
  policy: PromotionPolicy;
  maxActiveFacts: number;
  quietAfterMs: number;
  logger: Logger;
  now: () => Date;
}

export type PromotionOutcome =
  | { kind: 'not-quiet'; dueAt: Date }
  | { kind: 'nothing-new' }
  | { kind: 'promoted'; runId: string; accepted: number; rejected: number; topic: string | null };

export async function promoteThread(deps: PromotionDeps, threadId: string, trigger: PromotionTrigger): Promise<PromotionOutcome> {
  const { db } = deps;
  const now = deps.now();
  const thread = await loadThread(db, threadId);
  if (!thread) throw new AppError('NOT_FOUND', `no thread ${threadId}`);
  const row = await db.thread.findUniqueOrThrow({ where: { id: threadId }, select: { needsPromotion: true, topic: true } });
  if (trigger === 'quiet') {
    const dueAt = new Date(thread.lastMessageAt.getTime() + deps.quietAfterMs);
    if (dueAt > now) return { kind: 'not-quiet', dueAt };
  }
  if (!row.needsPromotion && trigger !== 'manual') return { kind: 'nothing-new' };

  // Only the customer's own words can become the customer's facts: a participant who joined the
  // thread (a Cc, a forged From's accomplice) is shown to no one as the customer.
  const customerMessages = await db.message.findMany({
    where: { threadId, direction: 'inbound', skipReason: null, entityId: thread.entityId },
    orderBy: [{ sentAt: 'asc' }, { receivedAt: 'asc' }],
    select: { messageId: true, extractedText: true, sentAt: true, receivedAt: true, authDmarc: true, fromAddress: true, replyTo: true, entityId: true },
  });
  const agentReplies = await db.draft.findMany({
    where: { threadId, status: { not: 'discarded' } },
    orderBy: { createdAt: 'asc' },
    select: { body: true },
  });
  const messages = customerMessages.map((m) => ({ messageId: m.messageId, date: m.sentAt ?? m.receivedAt, text: m.extractedText }));
  const prompt = buildPromotionPrompt({ thread: thread.state, messages, agentReplies: agentReplies.map((d) => d.body) });
  const answer = await deps.provider.threadPromotion({
    prompt,
    thread: thread.state,
    messages,
    agentReplies: agentReplies.map((d) => d.body),
  });
  await recordLlmCalls(db, answer.calls, { provider: deps.provider.name, model: deps.provider.model, threadId, at: now });

  const sources = new Map<string, SourceMessage>(
    customerMessages.map((m) => [
      m.messageId,
      {
        text: m.extractedText,
        date: m.sentAt ?? m.receivedAt,
        unverified: !trustedAsFactSource({ ...m, fromAddress: m.fromAddress ?? '' }, thread.entityId),
      },
    ]),
  );
  const existing = await db.profileFact.findMany({
    where: { entityId: thread.entityId, status: 'active' },
    select: { id: true, key: true, value: true, confidence: true, origin: true, createdAt: true, sourceMessageId: true },
  });
  const sourceDates = await sourceDatesFor(db, thread.mailboxId, existing.map((f) => f.sourceMessageId));
  const decisions = answer.ok
    ? decidePromotions({
        policy: deps.policy,
        candidates: answer.value.facts,
        messages: sources,
        existing: existing.map((f) => ({
          id: f.id,
          key: f.key,
          value: f.value,
          confidence: f.confidence,
          origin: f.origin,
          sourceDate: (f.sourceMessageId ? sourceDates.get(f.sourceMessageId) : undefined) ?? f.createdAt,
        })),
        maxActiveFacts: deps.maxActiveFacts,
      })
    : [];
  const topic = answer.ok ? answer.value.topic.replace(/\s+/g, ' ').trim().slice(0, 120) || null : row.topic;
  const closes = trigger === 'quiet' || trigger === 'resolved';
  const runId = newId('pr');

  await db.$transaction(async (tx) => {
    await tx.promotionRun.create({
      data: {
        id: runId,
        threadId,
        trigger,
        topic,
        policyVersion: deps.policy.version,
        promptTokens: answer.calls.reduce((s, c) => s + c.promptTokens, 0),
        completionTokens: answer.calls.reduce((s, c) => s + c.completionTokens, 0),
        createdAt: now,
      },
    });
    const inserted = new Map<string, string>();
    for (const [index, decision] of decisions.entries()) {
      const decisionId = newId('pd');
      const factId = decision.accepted ? await applyDecision(tx, { decision, decisionId, index, inserted, entityId: thread.entityId, threadId, now }) : null;
      await tx.promotionDecision.create({
        data: {
          id: decisionId,
          entityId: thread.entityId,
          runId,
          origin: 'promotion',
          key: decision.candidate.key,
          value: decision.candidate.value,
          category: decision.candidate.category,
          confidence: decision.candidate.confidence,
          explicit: decision.candidate.explicit,
          evidence: decision.candidate.evidence.slice(0, 1000),
          sourceMessageId: decision.candidate.sourceMessageId.slice(0, 300),
          accepted: decision.accepted,
          rule: decision.rule,
          reason: decision.reason,
          factId,
          createdAt: now,
        },
      });
    }
    if (answer.ok) {
      await tx.commitment.deleteMany({ where: { threadId, status: 'open' } });
      const commitments = answer.value.commitments.filter((c) => c.text.trim()).slice(0, 10);
      if (commitments.length > 0) {
        await tx.commitment.createMany({
          data: commitments.map((c) => ({
            id: newId('c'),
            entityId: thread.entityId,
            threadId,
            text: c.text.replace(/\s+/g, ' ').trim().slice(0, 300),
            due: c.due?.slice(0, 40) ?? null,
            createdAt: now,
          })),
        });
      }
    }
    await tx.thread.update({
      where: { id: threadId },
      data: {
        topic,
        needsPromotion: false,
        promotionError: null,
        promotionFailedAt: null,
        ...(closes ? { status: thread.state.status === 'resolved' ? 'resolved' : 'closed', closedAt: now } : {}),
      },
    });
  });

  const accepted = decisions.filter((d) => d.accepted).length;
  deps.logger.info('thread promoted', { threadId, trigger, accepted, rejected: decisions.length - accepted, ok: answer.ok });
  return { kind: 'promoted', runId, accepted, rejected: decisions.length - accepted, topic };
}

async function applyDecision(
  tx: Parameters<Parameters<Db['$transaction']>[0]>[0],
  input: { decision: Decision; decisionId: string; index: number; inserted: Map<string, string>; entityId: string; threadId: string; now: Date },
): Promise<string | null> {
  const { decision, now } = input;
  const action = decision.action;
  if (!action) return null;
  if (action.kind === 'refresh') {
    const id = input.inserted.get(action.factId) ?? action.factId;
    await tx.profileFact.update({ where: { id }, data: { expiresAt: action.expiresAt } });
    return id;
  }
  const factId = newId('f');
  await tx.profileFact.create({
    data: {
      id: factId,
      entityId: input.entityId,
      key: decision.candidate.key,
      value: decision.candidate.value,
      category: decision.candidate.category,
      confidence: decision.candidate.confidence,
      origin: 'email',
      sourceMessageId: decision.candidate.sourceMessageId,
      sourceThreadId: input.threadId,
      evidence: decision.candidate.evidence.slice(0, 1000),
      createdAt: now,
      expiresAt: action.expiresAt,
      decisionId: input.decisionId,
    },
  });
  input.inserted.set(pendingFactId(input.index), factId);
  if (action.kind === 'supersede') {
    const replaced = input.inserted.get(action.replacesFactId) ?? action.replacesFactId;
    await tx.profileFact.update({
      where: { id: replaced },
      data: { status: 'superseded', validUntil: decision.sourceDate ?? now, supersededById: factId },
    });
  }
  return factId;
}

/** When each fact's source message was written, to tell newer statements from older ones. */
async function sourceDatesFor(db: Db, mailboxId: string, messageIds: Array<string | null>): Promise<Map<string, Date>> {
  const ids = messageIds.filter((id): id is string => id !== null);
  if (ids.length === 0) return new Map();
  const rows = await db.message.findMany({ where: { mailboxId, messageId: { in: ids } }, select: { messageId: true, sentAt: true, receivedAt: true } });
  return new Map(rows.map((r) => [r.messageId, r.sentAt ?? r.receivedAt]));
}
