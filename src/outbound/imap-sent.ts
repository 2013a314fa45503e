/**
 * The mailbox's Sent folder(s) over IMAP, to settle a send whose outcome was never recorded: many
 * providers (Gmail, Microsoft 365, and servers configured to keep sent copies) file every message
 * their SMTP server accepted there, so finding our Message-ID proves it went out.
 */
import { AppError } from '../errors.ts';
import { createImapClient, type ImapLogin } from '../imap/imap-client.ts';

export interface SentFolder {
  /** True when a message with this Message-ID is in a folder marked `\Sent` (or named Sent). */
  contains(messageId: string): Promise<boolean>;
}

export function createImapSentFolder(login: ImapLogin): SentFolder {
  return {
    async contains(messageId) {
      const client = await createImapClient(login, { idle: false });
      try {
        await client.connect();
        const folders = await client.list();
        const sent = folders.filter((f) => f.specialUse === '\\Sent' || /^sent( items| messages| mail)?$/i.test(f.name));
        for (const folder of sent) {
          const lock = await client.getMailboxLock(folder.path, { readOnly: true });
          try {
            const found = await client.search({ header: { 'message-id': messageId } }, { uid: true });
            if (Array.isArray(found) && found.length > 0) return true;
          } finally {
            lock.release();
          }
        }
        return false;
      } catch (error) {
        throw new AppError('IMAP_FAILED', `IMAP Sent folder search failed: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      } finally {
        await client.logout().catch(() => client.close());
      }
    },
  };
}
