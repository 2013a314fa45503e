/**
 * A thread as a reader sees it (the console's thread page, `support-agent thread`): its notes,
 * its customer and participants, every message, every turn, and a message's original bytes.
 */
import { z } from 'zod';
import type { ContextTrace } from '../memory/profile-trace.ts';
import { jsonStringArray, type DbClient } from './client.ts';

/** A stored inclusion trace, parsed once here; an unreadable one (older rows have none) is null. */
const contextTraceSchema = z.object({
  tags: z.array(z.string()).catch([]),
  facts: z.array(
    z.object({
      factId: z.string().nullable().catch(null),
      key: z.string(),
      value: z.string(),
      origin: z.string(),
      verdict: z.enum(['included', 'left-out', 'withheld']),
      reason: z.string(),
    }),
  ),
  // Turns stored before passages were traced have none.
  passages: z
    .array(
      z.object({
        id: z.string(),
        title: z.string().catch(''),
        titlePath: z.string().catch(''),
        rank: z.number().catch(0),
        score: z.number().catch(0),
      }),
    )
    .catch([]),
  // Turns stored before issue 25 have no part sizes.
  parts: z
    .record(z.string(), z.object({ tokens: z.number(), share: z.number() }))
    .optional()
    .catch(undefined),
});

export function contextTraceOf(value: unknown): ContextTrace | null {
  const parsed = contextTraceSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

export interface ThreadDetail {
  id: string;
  entityId: string;
  subject: string;
  status: string;
  summary: string;
  openItems: string[];
  currentIntent: string;
  tags: string[];
  pinnedItems: string[];
  topic: string | null;
  lastMessageAt: Date;
  closedAt: Date | null;
  linkedThreadId: string | null;
  handoffAt: Date | null;
  handoffReason: string | null;
  promotionFailedAt: Date | null;
  promotionError: string | null;
  customer: { id: string; name: string | null; key: string };
  /** The mailbox the thread came in to (threads are per mailbox). */
  mailbox: { id: string; address: string };
  /** Participant addresses, in the order they joined. */
  participants: string[];
}

export interface ThreadMessage {
  id: string;
  messageId: string;
  direction: string;
  fromAddress: string | null;
  fromName: string | null;
  toAddresses: string[];
  sentAt: Date | null;
  receivedAt: Date;
  status: string;
  classification: string;
  skipReason: string | null;
  skipDetail: string | null;
  authDmarc: string | null;
  /** Only the message's new text (quotes and signature removed). */
  extractedText: string;
  /** The message's attachments and what became of each (read, image, skipped and why). */
  attachments: ThreadAttachment[];
}

export interface ThreadAttachment {
  filename: string | null;
  size: number;
  /** extracted | image | skipped; null for mail stored before attachments were read. */
  status: string | null;
  kind: string | null;
  chars: number;
  reason: string | null;
}

const storedAttachments = z
  .array(
    z.object({
      filename: z.string().nullable().catch(null),
      size: z.number().catch(0),
      extraction: z
        .object({ status: z.string(), kind: z.string(), chars: z.number().catch(0), reason: z.string().optional() })
        .optional()
        .catch(undefined),
    }),
  )
  .catch([]);

function attachmentsOf(value: unknown): ThreadAttachment[] {
  return storedAttachments.parse(value).map((a) => ({
    filename: a.filename,
    size: a.size,
    status: a.extraction?.status ?? null,
    kind: a.extraction?.kind ?? null,
    chars: a.extraction?.chars ?? 0,
    reason: a.extraction?.reason ?? null,
  }));
}

export interface ThreadTurn {
  id: string;
  status: string;
  provider: string | null;
  model: string | null;
  prompt: string | null;
  promptTokens: number;
  completionTokens: number;
  error: string | null;
  startedAt: Date;
  /** Why each profile fact was or was not in this turn's prompt; null for turns without one. */
  contextTrace: ContextTrace | null;
}

export async function loadThreadDetail(db: DbClient, threadId: string): Promise<ThreadDetail | null> {
  const t = await db.thread.findUnique({
    where: { id: threadId },
    select: {
      id: true,
      entityId: true,
      subject: true,
      status: true,
      summary: true,
      openItems: true,
      currentIntent: true,
      tags: true,
      pinnedItems: true,
      topic: true,
      lastMessageAt: true,
      closedAt: true,
      linkedThreadId: true,
      handoffAt: true,
      handoffReason: true,
      promotionFailedAt: true,
      promotionError: true,
      entity: { select: { id: true, name: true, key: true } },
      mailbox: { select: { id: true, address: true } },
      participants: { orderBy: { addedAt: 'asc' }, select: { address: true } },
    },
  });
  if (!t) return null;
  const { entity, participants, openItems, tags, pinnedItems, ...rest } = t;
  return {
    ...rest,
    openItems: jsonStringArray(openItems),
    tags: jsonStringArray(tags),
    pinnedItems: jsonStringArray(pinnedItems),
    customer: entity,
    participants: participants.map((p) => p.address),
  };
}

/** Every message of a thread, in the order it was written. */
export async function threadMessages(db: DbClient, threadId: string): Promise<ThreadMessage[]> {
  const rows = await db.message.findMany({
    where: { threadId },
    orderBy: [{ sentAt: 'asc' }, { receivedAt: 'asc' }, { id: 'asc' }],
    select: {
      id: true,
      messageId: true,
      direction: true,
      fromAddress: true,
      fromName: true,
      toAddresses: true,
      sentAt: true,
      receivedAt: true,
      status: true,
      classification: true,
      skipReason: true,
      skipDetail: true,
      authDmarc: true,
      extractedText: true,
      attachments: true,
    },
  });
  return rows.map((m) => ({ ...m, toAddresses: jsonStringArray(m.toAddresses), attachments: attachmentsOf(m.attachments) }));
}

/** Every turn of a thread, oldest first, with the prompt the model was given. */
export async function threadTurns(db: DbClient, threadId: string): Promise<ThreadTurn[]> {
  const rows = await db.turn.findMany({
    where: { threadId },
    orderBy: { startedAt: 'asc' },
    select: {
      id: true,
      status: true,
      provider: true,
      model: true,
      prompt: true,
      promptTokens: true,
      completionTokens: true,
      error: true,
      startedAt: true,
      contextTrace: true,
    },
  });
  return rows.map((t) => ({ ...t, contextTrace: contextTraceOf(t.contextTrace) }));
}

export interface OriginalMessage {
  id: string;
  threadId: string | null;
  messageId: string;
  fromAddress: string | null;
  fromName: string | null;
  sentAt: Date | null;
  receivedAt: Date;
  bodyText: string;
  /** The bytes as received; null for the agent's own replies, which were composed here. */
  raw: Buffer | null;
}

export async function loadOriginalMessage(db: DbClient, id: string): Promise<OriginalMessage | null> {
  const m = await db.message.findUnique({
    where: { id },
    select: {
      id: true,
      threadId: true,
      messageId: true,
      fromAddress: true,
      fromName: true,
      sentAt: true,
      receivedAt: true,
      bodyText: true,
      raw: { select: { raw: true } },
    },
  });
  if (!m) return null;
  return { ...m, raw: m.raw ? Buffer.from(m.raw.raw) : null };
}

/** A message's original bytes alone (for a download); null when none are stored. */
export async function loadRawMessage(db: DbClient, id: string): Promise<Buffer | null> {
  const row = await db.messageRaw.findUnique({ where: { messageId: id } });
  return row ? Buffer.from(row.raw) : null;
}

/** Our copies of messages named by RFC Message-ID (as facts name their source), with their threads. */
export async function messagesByMessageId(
  db: DbClient,
  mailboxId: string,
  messageIds: readonly string[],
): Promise<Array<{ id: string; threadId: string | null; messageId: string }>> {
  if (messageIds.length === 0) return [];
  return db.message.findMany({
    where: { mailboxId, messageId: { in: [...messageIds] } },
    select: { id: true, threadId: true, messageId: true },
  });
}

/** Whose thread this is (null for an unknown or erased one). */
export async function threadOwner(db: DbClient, threadId: string): Promise<{ entityId: string } | null> {
  return db.thread.findUnique({ where: { id: threadId }, select: { entityId: true } });
}
