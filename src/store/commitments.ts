/**
 * The support side's promises as an operator lists them: every open or overdue commitment (or
 * only the overdue ones), oldest due first, with the customer and thread they belong to.
 */
import type { DbClient } from './client.ts';

export interface CommitmentRecord {
  id: string;
  entityId: string;
  customer: string | null;
  threadId: string;
  subject: string;
  text: string;
  due: string | null;
  dueAt: Date | null;
  /** open | fulfilled | overdue | cancelled */
  status: string;
  sourceMessageId: string | null;
  closedByMessageId: string | null;
  closeEvidence: string | null;
  createdAt: Date;
  resolvedAt: Date | null;
}

export interface CommitmentQuery {
  /** Only overdue ones; otherwise every commitment still open (open or overdue). */
  overdue?: boolean;
  entityId?: string;
  threadId?: string;
  /** Closed ones too (fulfilled, cancelled), for a customer's or a thread's history. */
  includeClosed?: boolean;
  limit?: number;
}

/**
 * Commitments by the query. An open one past its due date counts as overdue at `now` even before
 * the reconciler's sweep marks it.
 */
export async function listCommitments(db: DbClient, now: Date, query: CommitmentQuery = {}): Promise<CommitmentRecord[]> {
  const statuses = query.includeClosed ? ['open', 'overdue', 'fulfilled', 'cancelled'] : ['open', 'overdue'];
  const rows = await db.commitment.findMany({
    where: {
      ...(query.overdue ? { OR: [{ status: 'overdue' }, { status: 'open', dueAt: { lt: now } }] } : { status: { in: statuses } }),
      ...(query.entityId ? { entityId: query.entityId } : {}),
      ...(query.threadId ? { threadId: query.threadId } : {}),
    },
    orderBy: [{ dueAt: { sort: 'asc', nulls: 'last' } }, { createdAt: 'asc' }, { id: 'asc' }],
    take: query.limit ?? 500,
    include: {
      thread: { select: { subject: true } },
      entity: { select: { addresses: { orderBy: { address: 'asc' }, take: 1, select: { address: true } } } },
    },
  });
  return rows.map((c) => ({
    id: c.id,
    entityId: c.entityId,
    customer: c.entity.addresses[0]?.address ?? null,
    threadId: c.threadId,
    subject: c.thread.subject,
    text: c.text,
    due: c.due,
    dueAt: c.dueAt,
    status: c.status === 'open' && c.dueAt !== null && c.dueAt < now ? 'overdue' : c.status,
    sourceMessageId: c.sourceMessageId,
    closedByMessageId: c.closedByMessageId,
    closeEvidence: c.closeEvidence,
    createdAt: c.createdAt,
    resolvedAt: c.resolvedAt,
  }));
}
