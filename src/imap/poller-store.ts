import type { Db } from '../store/database.ts';
import { advanceCheckpoint, readCheckpoint, recordPollerStatus } from '../store/mailboxes.ts';
import type { PollerStore } from './mailbox-poller.ts';

/** The poller's view of the database for one mailbox. */
export function createPollerStore(db: Db, mailboxId: string): PollerStore {
  return {
    readCheckpoint: (folder) => readCheckpoint(db, mailboxId, folder),
    advanceCheckpoint: (folder, uidValidity, lastUid) => advanceCheckpoint(db, mailboxId, folder, uidValidity, lastUid),
    knownMessageIds: async (messageIds) => {
      const rows = await db.message.findMany({ where: { mailboxId, messageId: { in: messageIds } }, select: { messageId: true } });
      return new Set(rows.map((r) => r.messageId));
    },
    recordStatus: (status) => recordPollerStatus(db, mailboxId, status),
  };
}
