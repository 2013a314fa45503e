/**
 * The mailbox's Drafts folder over IMAP, found by its special-use flag (`\Drafts`), so a person can
 * review and send the agent's draft from their own mail client.
 */
import { createImapClient, type ImapLogin } from '../imap/imap-client.ts';
import { AppError } from '../errors.ts';

export interface DraftsFolder {
  /** Appends the message unless a message with this Message-ID is already in the folder. */
  appendOnce(messageId: string, raw: Buffer): Promise<void>;
}

export function createImapDraftsFolder(login: ImapLogin): DraftsFolder {
  return {
    async appendOnce(messageId, raw) {
      const client = await createImapClient(login, { idle: false });
      try {
        await client.connect();
        const folders = await client.list();
        const drafts = folders.find((f) => f.specialUse === '\\Drafts') ?? folders.find((f) => /^drafts$/i.test(f.name));
        if (!drafts) throw new AppError('IMAP_FAILED', 'the mailbox has no Drafts folder (no \\Drafts special-use folder)');
        const lock = await client.getMailboxLock(drafts.path);
        try {
          // A retried job must not leave two copies: look for our Message-ID first.
          const found = await client.search({ header: { 'message-id': messageId } }, { uid: true });
          if (Array.isArray(found) && found.length > 0) return;
        } finally {
          lock.release();
        }
        await client.append(drafts.path, raw, ['\\Draft', '\\Seen']);
      } catch (error) {
        if (error instanceof AppError) throw error;
        throw new AppError('IMAP_FAILED', `IMAP draft append failed: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      } finally {
        await client.logout().catch(() => client.close());
      }
    },
  };
}
