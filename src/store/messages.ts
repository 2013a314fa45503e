import type { AttachmentInfo } from '../mail/parse-message.ts';
import { newId } from '../ids.ts';
import type { DbClient } from './client.ts';

export interface StoredMessageRef {
  id: string;
  threadId: string | null;
  entityId: string | null;
  status: string;
  direction: string;
}

export async function findStoredMessage(db: DbClient, mailboxId: string, messageId: string): Promise<StoredMessageRef | null> {
  return db.message.findUnique({
    where: { mailboxId_messageId: { mailboxId, messageId } },
    select: { id: true, threadId: true, entityId: true, status: true, direction: true },
  });
}

export interface NewMessage {
  mailboxId: string;
  messageId: string;
  syntheticId: boolean;
  threadId: string | null;
  entityId: string | null;
  direction: 'inbound' | 'outbound';
  source: 'imap' | 'replay' | 'api' | 'agent';
  imapFolder: string | null;
  imapUid: number | null;
  fromAddress?: string | null;
  fromName?: string | null;
  replyTo?: string | null;
  toAddresses?: string[];
  ccAddresses?: string[];
  subject?: string;
  inReplyTo?: string | null;
  references?: string[];
  sentAt?: Date | null;
  receivedAt: Date;
  bodyText?: string;
  extractedText?: string;
  attachments?: AttachmentInfo[];
  classification: string;
  skipReason: string | null;
  skipDetail: string | null;
  authDmarc?: string | null;
  authDkim?: string | null;
  authSpf?: string | null;
  status: string;
  turnId?: string | null;
  raw: Buffer | null;
}

/** Stores a message (and its raw bytes for audit). Throws a unique violation if the Message-ID is known. */
export async function insertMessage(db: DbClient, message: NewMessage): Promise<string> {
  const id = newId('m');
  const { raw, attachments, toAddresses, ccAddresses, references, ...fields } = message;
  await db.message.create({
    data: {
      id,
      ...fields,
      toAddresses: toAddresses ?? [],
      ccAddresses: ccAddresses ?? [],
      references: references ?? [],
      attachments: (attachments ?? []).map((a) => ({ ...a })),
      sizeBytes: raw?.length ?? 0,
      ...(raw ? { raw: { create: { raw: new Uint8Array(raw) } } } : {}),
    },
  });
  return id;
}
