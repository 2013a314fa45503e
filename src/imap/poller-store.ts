import type { Db } from '../store/database.ts';
import { advanceCheckpoint, knownMessageIds, readCheckpoint, recordPollerStatus } from '../store/mailboxes.ts';
import type { PollerStore } from './mailbox-poller.ts';

/** The poller's view of the database for one mailbox. */
export function createPollerStore(db: Db, mailboxId: string): PollerStore {
  return {
    readCheckpoint: (folder) => readCheckpoint(db, mailboxId, folder),
    advanceCheckpoint: (folder, uidValidity, lastUid) => advanceCheckpoint(db, mailboxId, folder, uidValidity, lastUid),
    knownMessageIds: (messageIds) => knownMessageIds(db, mailboxId, messageIds),
    recordStatus: (status) => recordPollerStatus(db, mailboxId, status),
  };
}
