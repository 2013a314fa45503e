/**
 * Threads by tag: what `support-agent threads --tag` and the console's tag filter list. The
 * model sets a thread's tags each turn (src/memory/thread-state.ts); here they are read.
 */
import { jsonStringArray, type DbClient } from './client.ts';

export interface TaggedThread {
  id: string;
  subject: string;
  status: string;
  tags: string[];
  openItems: number;
  lastMessageAt: Date;
  customer: { id: string; name: string | null; key: string };
  /** The address of the thread's mailbox. */
  mailbox: string;
}

/** At most this many threads are listed, newest activity first. */
export const TAGGED_THREADS_LIMIT = 200;

/** Threads carrying `tag` (in `status`, of the mailbox `mailboxId`, when given), newest activity first; without a tag, every thread. */
export async function threadsWithTag(
  db: DbClient,
  query: { tag?: string | undefined; status?: string; mailboxId?: string; limit?: number },
): Promise<TaggedThread[]> {
  const rows = await db.thread.findMany({
    where: {
      ...(query.tag ? { tags: { array_contains: [query.tag] } } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...(query.mailboxId ? { mailboxId: query.mailboxId } : {}),
    },
    orderBy: [{ lastMessageAt: 'desc' }, { id: 'asc' }],
    take: Math.min(query.limit ?? TAGGED_THREADS_LIMIT, TAGGED_THREADS_LIMIT),
    select: {
      id: true,
      subject: true,
      status: true,
      tags: true,
      openItems: true,
      lastMessageAt: true,
      entity: { select: { id: true, name: true, key: true } },
      mailbox: { select: { address: true } },
    },
  });
  return rows.map((t) => ({
    id: t.id,
    subject: t.subject,
    status: t.status,
    tags: jsonStringArray(t.tags),
    openItems: jsonStringArray(t.openItems).length,
    lastMessageAt: t.lastMessageAt,
    customer: t.entity,
    mailbox: t.mailbox.address,
  }));
}
