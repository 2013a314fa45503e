/**
 * The mailbox's Drafts folder over IMAP, found by its special-use flag (`\Drafts`), so a person can
 * review and send the agent's draft from their own mail client; and kept in step with the console:
 * a superseded, discarded or edited draft's copy is removed (by its UID, or by its Message-ID once
 * the folder's UIDVALIDITY changed).
 */
import type { ImapFlow } from 'imapflow';
import { createImapClient, type ImapLogin } from '../imap/imap-client.ts';
import { AppError } from '../errors.ts';

/** Where a copy is: its UID, valid only under this UIDVALIDITY. */
export interface DraftCopy {
  uid: number;
  uidValidity: bigint;
}

export interface DraftsFolder {
  /**
   * Appends the message unless a message with this Message-ID is already in the folder; returns
   * where the copy is (null when the server did not say: no UIDPLUS).
   */
  appendOnce(messageId: string, raw: Buffer): Promise<DraftCopy | null>;
  /** Removes the copy: at `copy` when the folder's UIDVALIDITY is still the same, else every message with the Message-ID. */
  remove(messageId: string, copy: DraftCopy | null): Promise<number>;
}

async function withDrafts<T>(
  login: ImapLogin,
  folder: string,
  what: string,
  work: (client: ImapFlow, path: string) => Promise<T>,
): Promise<T> {
  const client = await createImapClient(login, { idle: false });
  try {
    await client.connect();
    if (folder !== 'auto') return await work(client, folder);
    const folders = await client.list();
    const drafts = folders.find((f) => f.specialUse === '\\Drafts') ?? folders.find((f) => /^drafts$/i.test(f.name));
    if (!drafts) throw new AppError('IMAP_FAILED', 'the mailbox has no Drafts folder (no \\Drafts special-use folder)');
    return await work(client, drafts.path);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('IMAP_FAILED', `IMAP draft ${what} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  } finally {
    await client.logout().catch(() => client.close());
  }
}

async function uidsWithMessageId(client: ImapFlow, messageId: string): Promise<number[]> {
  const found = await client.search({ header: { 'message-id': messageId } }, { uid: true });
  return Array.isArray(found) ? found : [];
}

/** `folder`: a path, or `auto` for the folder marked \\Drafts (else one named Drafts). */
export function createImapDraftsFolder(login: ImapLogin, folder = 'auto'): DraftsFolder {
  return {
    appendOnce: (messageId, raw) =>
      withDrafts(login, folder, 'append', async (client, path) => {
        const lock = await client.getMailboxLock(path);
        try {
          // A retried job must not leave two copies: look for our Message-ID first.
          const found = await uidsWithMessageId(client, messageId);
          const box = client.mailbox;
          if (found.length > 0) return box ? { uid: found[0]!, uidValidity: box.uidValidity } : null;
        } finally {
          lock.release();
        }
        const appended = await client.append(path, raw, ['\\Draft', '\\Seen']);
        return appended && appended.uid !== undefined && appended.uidValidity !== undefined
          ? { uid: appended.uid, uidValidity: appended.uidValidity }
          : null;
      }),
    remove: (messageId, copy) =>
      withDrafts(login, folder, 'removal', async (client, path) => {
        const lock = await client.getMailboxLock(path);
        try {
          const box = client.mailbox;
          // Same UIDVALIDITY: the UID still names our copy (or nothing, if a person deleted or sent it).
          // Otherwise UIDs mean nothing any more: find it again by Message-ID.
          const uids =
            copy && box && box.uidValidity === copy.uidValidity
              ? (await client.search({ uid: String(copy.uid) }, { uid: true })) || []
              : await uidsWithMessageId(client, messageId);
          if (uids.length === 0) return 0;
          await client.messageDelete(uids.join(','), { uid: true });
          return uids.length;
        } finally {
          lock.release();
        }
      }),
  };
}
