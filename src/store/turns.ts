import { newId } from '../ids.ts';
import type { IncomingEmail, ThreadState } from '../memory/types.ts';
import type { LlmCallRecord } from '../llm/provider.ts';
import { jsonStringArray, type DbClient } from './client.ts';

export interface TurnMessage extends IncomingEmail {
  id: string;
  syntheticId: boolean;
  subject: string;
  references: string[];
  replyTo: string | null;
  authDmarc: string | null;
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
export function threadStateOf(row: { subject: string; summary: string; openItems: unknown; currentIntent: string; tags: unknown; status: string }): ThreadState {
  return {
    subject: row.subject,
    summary: row.summary,
    openItems: jsonStringArray(row.openItems),
    currentIntent: row.currentIntent,
    tags: jsonStringArray(row.tags),
    status: row.status,
  };
}

/**
 * The turn to run for a thread: an unfinished one left by a crashed attempt (so a retry finishes
 * the same turn and never makes a second draft), else a new turn that claims every message
 * waiting for a reply. Null when nothing is waiting.
 */
export async function startOrResumeTurn(db: DbClient, threadId: string, now: Date): Promise<{ turnId: string; resumed: boolean } | null> {
  const running = await db.turn.findFirst({ where: { threadId, status: 'running' }, orderBy: { startedAt: 'asc' }, select: { id: true } });
  if (running) return { turnId: running.id, resumed: true };
  const turnId = newId('turn');
  await db.turn.create({ data: { id: turnId, threadId, status: 'running', startedAt: now } });
  const claimed = await db.message.updateMany({
    where: { threadId, status: 'pending_reply', direction: 'inbound' },
    data: { status: 'in_turn', turnId },
  });
  if (claimed.count === 0) {
    await db.turn.delete({ where: { id: turnId } });
    return null;
  }
  return { turnId, resumed: false };
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
    subject: m.subject,
    references: jsonStringArray(m.references),
    replyTo: m.replyTo,
    authDmarc: m.authDmarc,
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

/** Replies (drafts not discarded) to a recipient and within a thread, over the last hour and day, in one query. */
export async function countRecentReplies(
  db: DbClient,
  query: { to: string; threadId: string; hourAgo: Date; dayAgo: Date },
): Promise<{ toRecipientHour: number; inThreadHour: number; toRecipientDay: number; inThreadDay: number }> {
  const [row] = await db.$queryRaw<Array<{ rh: bigint; th: bigint; rd: bigint; td: bigint }>>`
    SELECT
      count(*) FILTER (WHERE "toAddress" = ${query.to} AND "createdAt" >= ${query.hourAgo}) AS rh,
      count(*) FILTER (WHERE "threadId" = ${query.threadId} AND "createdAt" >= ${query.hourAgo}) AS th,
      count(*) FILTER (WHERE "toAddress" = ${query.to}) AS rd,
      count(*) FILTER (WHERE "threadId" = ${query.threadId}) AS td
    FROM "Draft"
    WHERE ("toAddress" = ${query.to} OR "threadId" = ${query.threadId}) AND "createdAt" >= ${query.dayAgo} AND "status" <> 'discarded'`;
  return {
    toRecipientHour: Number(row?.rh ?? 0),
    inThreadHour: Number(row?.th ?? 0),
    toRecipientDay: Number(row?.rd ?? 0),
    inThreadDay: Number(row?.td ?? 0),
  };
}
