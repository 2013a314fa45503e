import { newId } from '../ids.ts';
import type { DbClient } from './client.ts';

export interface MailboxRecord {
  id: string;
  address: string;
}

/** The mailbox row for the agent's own address, created on first use. */
export async function ensureMailbox(db: DbClient, address: string, displayName?: string): Promise<MailboxRecord> {
  const row = await db.mailbox.upsert({
    where: { address },
    create: { id: newId('mb'), address, displayName: displayName ?? null },
    update: {},
    select: { id: true, address: true },
  });
  return row;
}

export interface FolderCheckpoint {
  uidValidity: bigint;
  lastUid: number;
}

export async function readCheckpoint(db: DbClient, mailboxId: string, folder: string): Promise<FolderCheckpoint | null> {
  const row = await db.mailboxCheckpoint.findUnique({
    where: { mailboxId_folder: { mailboxId, folder } },
    select: { uidValidity: true, lastUid: true },
  });
  // A UID is at most 2^32 - 1, exact as a JavaScript number.
  return row ? { uidValidity: row.uidValidity, lastUid: Number(row.lastUid) } : null;
}

/** Moves the checkpoint forward; never backwards, so a slow duplicate poller cannot rewind it. */
export async function advanceCheckpoint(
  db: DbClient,
  mailboxId: string,
  folder: string,
  uidValidity: bigint,
  lastUid: number,
): Promise<void> {
  const moved = await db.mailboxCheckpoint.updateMany({
    where: { mailboxId, folder, OR: [{ uidValidity: { not: uidValidity } }, { lastUid: { lt: lastUid } }] },
    data: { uidValidity, lastUid: BigInt(lastUid) },
  });
  if (moved.count === 0) {
    await db.mailboxCheckpoint.createMany({ data: [{ mailboxId, folder, uidValidity, lastUid: BigInt(lastUid) }], skipDuplicates: true });
  }
}

export async function recordPollerStatus(
  db: DbClient,
  mailboxId: string,
  status: { connected: boolean; lastError?: string | null },
): Promise<void> {
  await db.mailbox.update({
    where: { id: mailboxId },
    data: {
      pollerConnected: status.connected,
      pollerSeenAt: new Date(),
      ...(status.lastError === undefined ? {} : { pollerLastError: status.lastError }),
    },
  });
}

/** Which of these Message-IDs the mailbox already holds (a UIDVALIDITY resync skips them). */
export async function knownMessageIds(db: DbClient, mailboxId: string, messageIds: readonly string[]): Promise<Set<string>> {
  const rows = await db.message.findMany({ where: { mailboxId, messageId: { in: [...messageIds] } }, select: { messageId: true } });
  return new Set(rows.map((r) => r.messageId));
}

/** The mailbox a thread belongs to; null when there is no such thread. */
export async function threadMailboxId(db: DbClient, threadId: string): Promise<string | null> {
  const row = await db.thread.findUnique({ where: { id: threadId }, select: { mailboxId: true } });
  return row?.mailboxId ?? null;
}

/** The mailbox a draft belongs to; null when there is no such draft. */
export async function draftMailboxId(db: DbClient, draftId: string): Promise<string | null> {
  const row = await db.draft.findUnique({ where: { id: draftId }, select: { mailboxId: true } });
  return row?.mailboxId ?? null;
}

/** Every mailbox the database knows, by address (the console's mailbox filter). */
export async function listMailboxes(db: DbClient): Promise<Array<MailboxRecord & { displayName: string | null }>> {
  return db.mailbox.findMany({ select: { id: true, address: true, displayName: true }, orderBy: { address: 'asc' } });
}
