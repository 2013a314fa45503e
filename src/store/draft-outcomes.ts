/**
 * How drafts ended, recorded from what the team sent (see src/memory/draft-outcome.ts): the pending
 * drafts of a thread, the draft with a given Message-ID, the settlements, and the agent's message
 * row taken over by the person who sent it. Plain SQL on ingestion's executor.
 */
import { z } from 'zod';
import type { DraftSettlement, PendingDraft } from '../memory/draft-outcome.ts';
import { utcTimestamp, type SqlExecutor } from './sql.ts';

// `timestamp` columns hold UTC without a zone; their epoch is read as such, whatever the session's zone.
const CREATED_MS = `(extract(epoch FROM "createdAt") * 1000)::float8 AS "createdAt"`;

const pendingRow = z.object({
  id: z.string(),
  messageId: z.string(),
  inReplyTo: z.string().nullable(),
  body: z.string(),
  createdAt: z.coerce.date(),
});

/** Drafts of the thread still waiting for a person (not sent, not discarded, not superseded). */
export async function pendingDraftsOfThread(sql: SqlExecutor, threadId: string): Promise<PendingDraft[]> {
  const rows = await sql.query(
    `SELECT "id", "messageId", "inReplyTo", "body", ${CREATED_MS} FROM "Draft"
     WHERE "threadId" = $1 AND "outcome" = 'pending' AND "status" = 'draft' ORDER BY "createdAt", "id"`,
    [threadId],
  );
  return rows.map((r) => pendingRow.parse(r));
}

const draftRow = pendingRow.extend({ threadId: z.string(), status: z.string(), outcome: z.string() });

export type DraftByMessageId = z.infer<typeof draftRow>;

/** The draft with this Message-ID in the mailbox, if any. */
export async function draftByMessageId(sql: SqlExecutor, mailboxId: string, messageId: string): Promise<DraftByMessageId | null> {
  const rows = await sql.query(
    `SELECT "id", "threadId", "messageId", "inReplyTo", "body", ${CREATED_MS}, "status", "outcome" FROM "Draft"
     WHERE "mailboxId" = $1 AND "messageId" = $2`,
    [mailboxId, messageId],
  );
  if (!rows[0]) return null;
  return draftRow.parse(rows[0]);
}

/**
 * Records settlements, each only while its draft was not sent (pending, or taken off review but then
 * sent by a person all the same): a draft a person sent becomes
 * `sent` (sent-as-is, sent-edited), one the team replaced becomes `discarded` (its copy in the
 * Drafts folder then goes), and the agent's message rows that mirror them follow.
 */
export async function recordDraftOutcomes(
  sql: SqlExecutor,
  settlements: readonly DraftSettlement[],
  sent: { messageId: string; at: Date },
): Promise<void> {
  if (settlements.length === 0) return;
  await sql.query(
    `WITH x AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x("draftId" text, "outcome" text, "similarity" float8, "match" text)
     ), d AS (
       UPDATE "Draft" d SET "outcome" = x."outcome", "outcomeSimilarity" = x."similarity", "outcomeMatch" = x."match",
         "outcomeMessageId" = $2, "outcomeAt" = $3::timestamp,
         "status" = CASE WHEN x."outcome" = 'replaced' THEN 'discarded' ELSE 'sent' END,
         "sentAt" = CASE WHEN x."outcome" = 'replaced' THEN d."sentAt" ELSE $3::timestamp END,
         "updatedAt" = $3::timestamp
       FROM x WHERE d."id" = x."draftId" AND d."status" IN ('draft', 'discarded')
       RETURNING d."mailboxId", d."messageId", d."status"
     )
     UPDATE "Message" m SET "status" = d."status" FROM d
     WHERE m."mailboxId" = d."mailboxId" AND m."messageId" = d."messageId" AND m."direction" = 'outbound' AND m."author" = 'agent'`,
    [JSON.stringify(settlements), sent.messageId, utcTimestamp(sent.at)],
  );
}

/**
 * A person sent the agent's draft keeping its Message-ID: the agent's message row becomes the
 * team's reply with the text that was actually sent (the draft row keeps what the agent wrote).
 */
export async function adoptSentDraft(
  sql: SqlExecutor,
  sent: {
    mailboxId: string;
    messageId: string;
    bodyText: string;
    extractedText: string;
    sentAt: Date;
    receivedAt: Date;
    imapFolder: string | null;
    imapUid: number | null;
  },
): Promise<void> {
  await sql.query(
    `UPDATE "Message" SET "author" = 'staff', "status" = 'sent', "bodyText" = $3, "extractedText" = $4, "sentAt" = $5::timestamp,
       "receivedAt" = $6::timestamp, "imapFolder" = $7, "imapUid" = $8
     WHERE "mailboxId" = $1 AND "messageId" = $2 AND "direction" = 'outbound'`,
    [
      sent.mailboxId,
      sent.messageId,
      sent.bodyText,
      sent.extractedText,
      utcTimestamp(sent.sentAt),
      utcTimestamp(sent.receivedAt),
      sent.imapFolder,
      sent.imapUid,
    ],
  );
}
