/**
 * What a promotion pass reads (the thread, its customer's messages, the team's replies, the
 * profile's active facts) and the one transaction that stores its outcome (the run, every
 * decision, the facts it adds, supersedes or refreshes, the open commitments, the thread's topic).
 */
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Decision, ExistingFact } from '../memory/promotion-policy.ts';
import { pendingFactId } from '../memory/promotion-policy.ts';
import type { DbClient } from './client.ts';
import type { Db } from './database.ts';
import { loadThread, type ThreadRecord } from './turns.ts';

/** A customer message of the thread, with what decides whether it may source facts. */
export interface PromotionSourceMessage {
  messageId: string;
  text: string;
  date: Date;
  fromAddress: string;
  replyTo: string | null;
  authDmarc: string | null;
  entityId: string | null;
}

export interface PromotionInput {
  thread: ThreadRecord & { needsPromotion: boolean; topic: string | null };
  /** The thread customer's own inbound messages, oldest first (never a participant's). */
  messages: PromotionSourceMessage[];
  /** The team's replies in the thread (drafts not discarded), oldest first. */
  replies: string[];
}

export async function loadPromotionInput(db: DbClient, threadId: string): Promise<PromotionInput> {
  const thread = await loadThread(db, threadId);
  if (!thread) throw new AppError('NOT_FOUND', `no thread ${threadId}`);
  const row = await db.thread.findUniqueOrThrow({ where: { id: threadId }, select: { needsPromotion: true, topic: true } });
  // Only the customer's own words can become the customer's facts: a participant who joined the
  // thread (a Cc, a forged From's accomplice) is shown to no one as the customer.
  const messages = await db.message.findMany({
    where: { threadId, direction: 'inbound', skipReason: null, entityId: thread.entityId },
    orderBy: [{ sentAt: 'asc' }, { receivedAt: 'asc' }],
    select: {
      messageId: true,
      extractedText: true,
      sentAt: true,
      receivedAt: true,
      authDmarc: true,
      fromAddress: true,
      replyTo: true,
      entityId: true,
    },
  });
  const replies = await db.draft.findMany({
    where: { threadId, status: { not: 'discarded' } },
    orderBy: { createdAt: 'asc' },
    select: { body: true },
  });
  return {
    thread: { ...thread, needsPromotion: row.needsPromotion, topic: row.topic },
    messages: messages.map((m) => ({
      messageId: m.messageId,
      text: m.extractedText,
      date: m.sentAt ?? m.receivedAt,
      fromAddress: m.fromAddress ?? '',
      replyTo: m.replyTo,
      authDmarc: m.authDmarc,
      entityId: m.entityId,
    })),
    replies: replies.map((d) => d.body),
  };
}

/** The profile's active facts, each with the date its source message was written (else when it was stored). */
export async function loadActiveFacts(db: DbClient, entityId: string, mailboxId: string): Promise<ExistingFact[]> {
  const facts = await db.profileFact.findMany({
    where: { entityId, status: 'active' },
    select: { id: true, key: true, value: true, confidence: true, origin: true, createdAt: true, sourceMessageId: true },
  });
  const ids = facts.flatMap((f) => (f.sourceMessageId ? [f.sourceMessageId] : []));
  const sources =
    ids.length === 0
      ? []
      : await db.message.findMany({
          where: { mailboxId, messageId: { in: ids } },
          select: { messageId: true, sentAt: true, receivedAt: true },
        });
  const dates = new Map(sources.map((r) => [r.messageId, r.sentAt ?? r.receivedAt]));
  return facts.map((f) => ({
    id: f.id,
    key: f.key,
    value: f.value,
    confidence: f.confidence,
    origin: f.origin,
    sourceDate: (f.sourceMessageId ? dates.get(f.sourceMessageId) : undefined) ?? f.createdAt,
  }));
}

export interface PromotionCommit {
  runId: string;
  threadId: string;
  entityId: string;
  trigger: string;
  topic: string | null;
  policyVersion: string;
  promptTokens: number;
  completionTokens: number;
  decisions: readonly Decision[];
  /** The open commitments the pass found (replacing the thread's open ones), or null to keep them. */
  commitments: Array<{ text: string; due: string | null }> | null;
  /** Set when the pass closes the thread (quiet or resolved): its final status. */
  closeAs: 'resolved' | 'closed' | null;
  now: Date;
}

/** Stores a promotion pass in one transaction; a run that fails leaves nothing behind. */
export async function commitPromotion(db: Db, c: PromotionCommit): Promise<void> {
  await db.$transaction(async (tx) => {
    await tx.promotionRun.create({
      data: {
        id: c.runId,
        threadId: c.threadId,
        trigger: c.trigger,
        topic: c.topic,
        policyVersion: c.policyVersion,
        promptTokens: c.promptTokens,
        completionTokens: c.completionTokens,
        createdAt: c.now,
      },
    });
    const inserted = new Map<string, string>();
    for (const [index, decision] of c.decisions.entries()) {
      const decisionId = newId('pd');
      const factId = decision.accepted
        ? await applyDecision(tx, { decision, decisionId, index, inserted, entityId: c.entityId, threadId: c.threadId, now: c.now })
        : null;
      await tx.promotionDecision.create({
        data: {
          id: decisionId,
          entityId: c.entityId,
          runId: c.runId,
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
          createdAt: c.now,
        },
      });
    }
    if (c.commitments) {
      await tx.commitment.deleteMany({ where: { threadId: c.threadId, status: 'open' } });
      if (c.commitments.length > 0) {
        await tx.commitment.createMany({
          data: c.commitments.map((commitment) => ({
            id: newId('c'),
            entityId: c.entityId,
            threadId: c.threadId,
            text: commitment.text,
            due: commitment.due,
            createdAt: c.now,
          })),
        });
      }
    }
    await tx.thread.update({
      where: { id: c.threadId },
      data: {
        topic: c.topic,
        needsPromotion: false,
        promotionError: null,
        promotionFailedAt: null,
        ...(c.closeAs ? { status: c.closeAs, closedAt: c.now } : {}),
      },
    });
  });
}

type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

async function applyDecision(
  tx: Tx,
  input: {
    decision: Decision;
    decisionId: string;
    index: number;
    inserted: Map<string, string>;
    entityId: string;
    threadId: string;
    now: Date;
  },
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

/** Threads of a mailbox whose news the profile has not seen, oldest activity first. */
export async function threadsNeedingPromotion(
  db: DbClient,
  mailboxId: string,
): Promise<Array<{ id: string; lastMessageAt: Date; status: string }>> {
  return db.thread.findMany({
    where: { mailboxId, needsPromotion: true },
    orderBy: [{ lastMessageAt: 'asc' }, { id: 'asc' }],
    select: { id: true, lastMessageAt: true, status: true },
  });
}
