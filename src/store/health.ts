/**
 * What the console's health page reads from the database: the IMAP poller's state per mailbox,
 * replies by status, and LLM token usage per day. Queue depths come from Redis, not from here.
 */
import { z } from 'zod';
import type { DbClient } from './client.ts';

export interface MailboxStatus {
  id: string;
  address: string;
  pollerConnected: boolean;
  pollerSeenAt: Date | null;
  pollerLastError: string | null;
  /** Per folder, alphabetical. UIDs and UIDVALIDITY are unsigned 32-bit: exact as numbers. */
  checkpoints: Array<{ folder: string; lastUid: number; uidValidity: number; updatedAt: Date }>;
}

export interface UsageRow {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  purpose: string;
  calls: number;
  failed: number;
  prompt: number;
  completion: number;
}

export async function mailboxStatuses(db: DbClient): Promise<MailboxStatus[]> {
  const rows = await db.mailbox.findMany({
    orderBy: { address: 'asc' },
    select: {
      id: true,
      address: true,
      pollerConnected: true,
      pollerSeenAt: true,
      pollerLastError: true,
      checkpoints: { orderBy: { folder: 'asc' }, select: { folder: true, lastUid: true, uidValidity: true, updatedAt: true } },
    },
  });
  return rows.map((m) => ({
    ...m,
    checkpoints: m.checkpoints.map((cp) => ({
      folder: cp.folder,
      lastUid: Number(cp.lastUid),
      uidValidity: Number(cp.uidValidity),
      updatedAt: cp.updatedAt,
    })),
  }));
}

/** How many replies are in each status (draft, queued, sent...) and outcome (a discard, a supersession...). */
export async function draftStatusCounts(db: DbClient): Promise<Array<{ status: string; outcome: string; count: number }>> {
  const rows = await db.draft.groupBy({
    by: ['status', 'outcome'],
    _count: { _all: true },
    orderBy: [{ status: 'asc' }, { outcome: 'asc' }],
  });
  return rows.map((r) => ({ status: r.status, outcome: r.outcome, count: r._count._all }));
}

// count(*) and sum() arrive as bigint or numeric text depending on the driver.
const usageRow = z.object({
  day: z.string(),
  purpose: z.string(),
  calls: z.coerce.number(),
  failed: z.coerce.number(),
  prompt: z.coerce.number(),
  completion: z.coerce.number(),
});

/** LLM calls and tokens per UTC day and purpose since `since`, newest day first. */
export async function llmUsageByDay(db: DbClient, since: Date): Promise<UsageRow[]> {
  const rows = await db.$queryRaw`
    SELECT to_char(date_trunc('day', "createdAt"), 'YYYY-MM-DD') AS day, purpose,
           count(*) AS calls, count(*) FILTER (WHERE NOT ok) AS failed,
           coalesce(sum("promptTokens"), 0) AS prompt, coalesce(sum("completionTokens"), 0) AS completion
    FROM "LlmCall" WHERE "createdAt" >= ${since}
    GROUP BY 1, 2 ORDER BY 1 DESC, 2`;
  return z.array(usageRow).parse(rows);
}
