/**
 * Mail the agent kept but did not answer (auto-replies, bounces, lists, loops, too-large,
 * malformed), newest first, for the console's "Skipped mail" page.
 */
import type { DbClient } from './client.ts';

export interface SkippedMessage {
  id: string;
  threadId: string | null;
  fromAddress: string | null;
  fromName: string | null;
  subject: string;
  skipReason: string;
  /** The signal that decided ("Auto-Submitted: auto-replied"). */
  skipDetail: string | null;
  receivedAt: Date;
  sizeBytes: number;
}

export interface SkippedMail {
  messages: SkippedMessage[];
  /** How many skipped messages each reason has in all (not only those listed). */
  counts: Record<string, number>;
}

/** The latest `limit` skipped inbound messages, of one reason or all. */
export async function listSkippedMail(db: DbClient, options: { reason?: string | undefined; limit: number }): Promise<SkippedMail> {
  const skipped = { direction: 'inbound', skipReason: { not: null } } as const;
  const [rows, groups] = await Promise.all([
    db.message.findMany({
      where: options.reason ? { ...skipped, skipReason: options.reason } : skipped,
      orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
      take: options.limit,
      select: {
        id: true,
        threadId: true,
        fromAddress: true,
        fromName: true,
        subject: true,
        skipReason: true,
        skipDetail: true,
        receivedAt: true,
        sizeBytes: true,
      },
    }),
    db.message.groupBy({ by: ['skipReason'], where: skipped, _count: { _all: true } }),
  ]);
  return {
    messages: rows.map((row) => ({ ...row, skipReason: row.skipReason ?? '' })),
    counts: Object.fromEntries(groups.map((g) => [g.skipReason ?? '', g._count._all])),
  };
}
