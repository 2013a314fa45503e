import { newId } from '../ids.ts';
import type { LoopState } from '../memory/loop-guard.ts';
import type { IncomingEmail, ThreadState } from '../memory/types.ts';
import type { LlmCallRecord } from '../llm/provider.ts';
import { jsonStringArray, type DbClient } from './client.ts';
import type { Db } from './database.ts';
import { saveLoopStates } from './loop-states.ts';

export interface TurnMessage extends IncomingEmail {
  id: string;
  syntheticId: boolean;
  subject: string;
  references: string[];
  replyTo: string | null;
  authDmarc: string | null;
  /** Its To and Cc, as stored: who the reply may keep in Cc (src/memory/reply-cc.ts). */
  toAddresses: string[];
  ccAddresses: string[];
}

export interface ThreadRecord {
  id: string;
  mailboxId: string;
  entityId: string;
  version: number;
  lastMessageAt: Date;
  state: ThreadState;
}

export async function loadThread(db: DbClient, threadId: string): Promise<ThreadRecord | null> {
  const t = await db.thread.findUnique({ where: { id: threadId } });
  if (!t) return null;
  return {
    id: t.id,
    mailboxId: t.mailboxId,
    entityId: t.entityId,
    version: t.version,
    lastMessageAt: t.lastMessageAt,
    state: threadStateOf(t),
  };
}

/** Thread state as the pure core sees it, from a stored thread row. */
export function threadStateOf(row: {
  subject: string;
  summary: string;
  openItems: unknown;
  currentIntent: string;
  tags: unknown;
  pinnedItems: unknown;
  status: string;
}): ThreadState {
  return {
    subject: row.subject,
    summary: row.summary,
    openItems: jsonStringArray(row.openItems),
    currentIntent: row.currentIntent,
    tags: jsonStringArray(row.tags),
    pinnedItems: jsonStringArray(row.pinnedItems),
    status: row.status,
  };
}

/** Customer messages of a thread still waiting for a turn (mail that arrived during a turn, or from another sender). */
export async function countPendingReplies(db: DbClient, threadId: string): Promise<number> {
  return db.message.count({ where: { threadId, status: 'pending_reply', direction: 'inbound' } });
}

export async function loadTurnMessages(db: DbClient, turnId: string): Promise<TurnMessage[]> {
  const rows = await db.message.findMany({
    where: { turnId, direction: 'inbound' },
    orderBy: [{ sentAt: 'asc' }, { receivedAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map((m) => ({
    id: m.id,
    messageId: m.messageId,
    syntheticId: m.syntheticId,
    fromName: m.fromName,
    fromAddress: m.fromAddress ?? '',
    date: m.sentAt ?? m.receivedAt,
    text: m.extractedText,
    attachmentText: m.attachmentText,
    subject: m.subject,
    references: jsonStringArray(m.references),
    replyTo: m.replyTo,
    authDmarc: m.authDmarc,
    toAddresses: jsonStringArray(m.toAddresses),
    ccAddresses: jsonStringArray(m.ccAddresses),
  }));
}

export async function recordLlmCalls(
  db: DbClient,
  calls: readonly LlmCallRecord[],
  meta: { provider: string; model: string; threadId: string | null; at: Date },
): Promise<void> {
  if (calls.length === 0) return;
  await db.llmCall.createMany({
    data: calls.map((c) => ({
      id: newId('llm'),
      purpose: c.purpose,
      provider: meta.provider,
      model: meta.model,
      threadId: meta.threadId,
      promptTokens: c.promptTokens,
      completionTokens: c.completionTokens,
      ok: c.ok,
      createdAt: meta.at,
    })),
  });
}

/** Why a draft needs a person, as shown in the console (the outbound guard's findings and similar). */
export interface DraftFlag {
  rule: string;
  excerpt: string;
  reason: string;
}

/**
 * Ends a turn with no reply (a reply limit, a suspected loop): its messages are marked `no_reply`
 * with the reason; a thread handed to a person remembers why.
 */
export async function finishTurnWithoutReply(
  db: Db,
  input: { turnId: string; threadId: string; reason: string; handoff: boolean; loopStates: readonly LoopState[]; now: Date },
): Promise<void> {
  await db.$transaction(async (tx) => {
    await tx.message.updateMany({ where: { turnId: input.turnId }, data: { status: 'no_reply', skipDetail: input.reason.slice(0, 500) } });
    await tx.turn.update({
      where: { id: input.turnId },
      data: { status: 'skipped', error: input.reason.slice(0, 1000), finishedAt: input.now },
    });
    if (input.handoff) {
      await tx.thread.update({ where: { id: input.threadId }, data: { handoffReason: input.reason.slice(0, 500), handoffAt: input.now } });
    }
    await saveLoopStates(tx, input.loopStates);
  });
}

/** The turn a crashed or failed job left running in this thread, if any. */
export async function findRunningTurn(db: DbClient, threadId: string): Promise<string | null> {
  const running = await db.turn.findFirst({ where: { threadId, status: 'running' }, select: { id: true } });
  return running?.id ?? null;
}

/** Threads with customer mail waiting for (or in) a turn, for the reconciler. */
export async function pendingTurnThreadIds(db: DbClient, mailboxId: string): Promise<string[]> {
  const rows = await db.message.findMany({
    where: { mailboxId, direction: 'inbound', status: { in: ['pending_reply', 'in_turn'] }, threadId: { not: null } },
    distinct: ['threadId'],
    select: { threadId: true },
  });
  return rows.flatMap((r) => (r.threadId ? [r.threadId] : []));
}

/**
 * A promotion that failed for good (every retry used): the thread stops asking for one, so no
 * reconciler or turn reschedules it without end, and the console shows why. New customer mail
 * asks again.
 */
export async function markPromotionFailed(db: DbClient, threadId: string, reason: string, now: Date): Promise<void> {
  await db.thread.updateMany({
    where: { id: threadId },
    data: { needsPromotion: false, promotionError: reason.slice(0, 500), promotionFailedAt: now },
  });
}

/** The stored originals of these messages (for their images, src/ingest/turn-images.ts), by message id. */
export async function loadRawMessages(db: DbClient, messageIds: readonly string[]): Promise<Map<string, Buffer>> {
  if (messageIds.length === 0) return new Map();
  const rows = await db.messageRaw.findMany({ where: { messageId: { in: [...messageIds] } } });
  return new Map(rows.map((r) => [r.messageId, Buffer.from(r.raw)]));
}
