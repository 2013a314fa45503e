/**
 * Attachments that were not read, with the reason recorded at ingestion ("it inflates to more than
 * 64 MB (a zip bomb?)", "reading it needed more than ATTACHMENT_WORKER_MEMORY …"), for the replay
 * report. Read back from `Message.attachments`, where ingestion stored each file's extraction.
 */
import type { DbClient } from './client.ts';

export interface SkippedAttachment {
  messageId: string;
  filename: string;
  reason: string;
}

/** Every skipped attachment of a mailbox's messages, in the order the messages arrived. */
export async function skippedAttachments(db: DbClient, mailboxId: string): Promise<SkippedAttachment[]> {
  const rows = await db.message.findMany({
    where: { mailboxId, direction: 'inbound' },
    select: { messageId: true, attachments: true },
    orderBy: [{ receivedAt: 'asc' }, { id: 'asc' }],
  });
  const out: SkippedAttachment[] = [];
  for (const row of rows) {
    if (!Array.isArray(row.attachments)) continue;
    for (const attachment of row.attachments as Array<{ filename?: unknown; extraction?: { status?: unknown; reason?: unknown } }>) {
      if (attachment?.extraction?.status !== 'skipped') continue;
      out.push({
        messageId: row.messageId,
        filename: typeof attachment.filename === 'string' ? attachment.filename : '',
        reason: typeof attachment.extraction.reason === 'string' ? attachment.extraction.reason : '',
      });
    }
  }
  return out;
}
