/**
 * Ingestion's storage in two round trips: one read that gathers everything the threading and
 * entity rules need, and one write statement (data-modifying CTEs) that stores the message with
 * its entity, thread, participants and thread keys atomically. A single statement needs no
 * BEGIN/COMMIT, and constraints settle races: a concurrent duplicate fails the Message-ID key, a
 * concurrently created entity or deleted thread fails a foreign key (the caller looks again).
 */
import { z } from 'zod';
import type { KnownEntity } from '../mail/entity-resolution.ts';
import type { AttachmentInfo } from '../mail/parse-message.ts';
import type { CandidateThread, ThreadKeyMatch } from '../mail/threading.ts';
import { sqlErrorInfo, utcTimestamp, type SqlExecutor } from './sql.ts';

const entityRow = z.object({ id: z.string(), kind: z.string(), key: z.string(), name: z.string().nullable() });
const lookupRow = z.object({
  linked: entityRow.nullable(),
  by_key: entityRow.nullable(),
  matches: z.array(z.object({ messageId: z.string(), threadId: z.string(), kind: z.enum(['outbound', 'seen', 'referenced']) })),
  threads: z.array(z.object({ id: z.string(), entityId: z.string(), participants: z.array(z.string()) })),
  subject_match: z.string().nullable(),
});

export interface IngestLookupQuery {
  mailboxId: string;
  /** The sender's address as entities know it; null when there is none. */
  address: string | null;
  /** The entity key to look for when the address is not linked; null to skip. */
  entityKey: string | null;
  headerIds: readonly string[];
  /** Only looked up when non-empty and no header matched. */
  normalizedSubject: string;
  subjectSince: Date;
}

export interface IngestLookup {
  linked: KnownEntity | null;
  byKey: KnownEntity | null;
  matches: ThreadKeyMatch[];
  threads: Map<string, CandidateThread>;
  /** The resolved entity's latest thread with this subject inside the window, if no header matched. */
  subjectMatch: { threadId: string } | null;
}

const LOOKUP_SQL = `
WITH linked AS (
  SELECT e."id", e."kind", e."key", e."name"
  FROM "EntityAddress" a JOIN "Entity" e ON e."id" = a."entityId"
  WHERE a."address" = $2
), by_key AS (
  SELECT "id", "kind", "key", "name" FROM "Entity" WHERE "key" = $3 AND NOT EXISTS (SELECT 1 FROM linked)
), keys AS (
  SELECT k."messageId", k."threadId", k."kind"
  FROM "ThreadKey" k
  WHERE k."mailboxId" = $1 AND k."messageId" IN (SELECT jsonb_array_elements_text($4::jsonb))
)
SELECT
  (SELECT row_to_json(linked) FROM linked LIMIT 1) AS linked,
  (SELECT row_to_json(by_key) FROM by_key LIMIT 1) AS by_key,
  (SELECT coalesce(json_agg(keys), '[]'::json) FROM keys) AS matches,
  (SELECT coalesce(json_agg(json_build_object(
      'id', t."id", 'entityId', t."entityId",
      'participants', (SELECT coalesce(json_agg(p."address"), '[]'::json) FROM "ThreadParticipant" p WHERE p."threadId" = t."id"))), '[]'::json)
   FROM "Thread" t WHERE t."id" IN (SELECT "threadId" FROM keys)) AS threads,
  (SELECT t."id" FROM "Thread" t
   WHERE $5 <> '' AND NOT EXISTS (SELECT 1 FROM keys)
     AND t."mailboxId" = $1 AND t."normalizedSubject" = $5 AND t."lastMessageAt" >= $6::timestamp
     AND t."entityId" = coalesce((SELECT "id" FROM linked LIMIT 1), (SELECT "id" FROM by_key LIMIT 1))
   ORDER BY t."lastMessageAt" DESC LIMIT 1) AS subject_match`;

export async function lookupForIngest(sql: SqlExecutor, query: IngestLookupQuery): Promise<IngestLookup> {
  const rows = await sql.query(LOOKUP_SQL, [
    query.mailboxId,
    query.address,
    query.entityKey,
    JSON.stringify(query.headerIds),
    query.normalizedSubject,
    utcTimestamp(query.subjectSince),
  ]);
  const row = lookupRow.parse(rows[0]);
  return {
    linked: row.linked,
    byKey: row.by_key,
    matches: row.matches,
    threads: new Map(row.threads.map((t) => [t.id, { id: t.id, entityId: t.entityId, participants: new Set(t.participants) }])),
    subjectMatch: row.subject_match ? { threadId: row.subject_match } : null,
  };
}

export interface StoredMessageRef {
  id: string;
  threadId: string | null;
  entityId: string | null;
  status: string;
  direction: string;
  author: string;
}

const storedRow = z.object({
  id: z.string(),
  threadId: z.string().nullable(),
  entityId: z.string().nullable(),
  status: z.string(),
  direction: z.string(),
  author: z.string(),
});

export async function findStoredMessage(sql: SqlExecutor, mailboxId: string, messageId: string): Promise<StoredMessageRef | null> {
  const rows = await sql.query(
    `SELECT "id", "threadId", "entityId", "status", "direction", "author" FROM "Message" WHERE "mailboxId" = $1 AND "messageId" = $2`,
    [mailboxId, messageId],
  );
  return rows[0] ? storedRow.parse(rows[0]) : null;
}

export interface NewInboundMessage {
  id: string;
  mailboxId: string;
  messageId: string;
  syntheticId: boolean;
  threadId: string | null;
  entityId: string | null;
  source: 'imap' | 'replay' | 'api';
  /** Inbound customer mail unless set: the team's own reply is `outbound` by `staff`. */
  direction?: 'inbound' | 'outbound';
  author?: 'customer' | 'staff';
  imapFolder: string | null;
  imapUid: number | null;
  fromAddress: string | null;
  fromName: string | null;
  replyTo: string | null;
  toAddresses: string[];
  ccAddresses: string[];
  subject: string;
  inReplyTo: string | null;
  references: string[];
  sentAt: Date | null;
  receivedAt: Date;
  bodyText: string;
  extractedText: string;
  attachments: AttachmentInfo[];
  /** The attachments' text block (headings and read text), for the reply prompt; '' when none. */
  attachmentText: string;
  classification: string;
  skipReason: string | null;
  skipDetail: string | null;
  authDmarc: string | null;
  authDkim: string | null;
  authSpf: string | null;
  status: string;
  /** Kept for audit and for the console's "original" view. */
  raw: Buffer;
}

export interface IngestWrite {
  message: NewInboundMessage;
  newEntity?: KnownEntity;
  renameEntity?: { id: string; name: string };
  attachAddress?: { entityId: string; address: string; displayName: string | null; id: string };
  newThread?: {
    id: string;
    mailboxId: string;
    entityId: string;
    subject: string;
    normalizedSubject: string;
    at: Date;
    linkedThreadId: string | null;
  };
  /** A new customer message in an existing thread: active again, its clock moves forward. */
  touchThread?: { id: string; at: Date };
  /**
   * The team answered in this thread (a staff reply): its clock moves forward, and customer mail
   * written before `at` that still waits for the agent is answered already.
   */
  teamReplied?: {
    id: string;
    at: Date;
    /**
     * A person's verified reply answers the thread's open items as they stand (see
     * docs/team-identity.md): they leave `openItems`, one line in the summary says they were
     * answered, and the thread's version moves so a turn running meanwhile starts again.
     */
    answersOpenItems?: boolean;
  };
  /** Marks the thread for a person (the console's "Handed to a person"), with the reason. */
  handOff?: { id: string; reason: string; at: Date };
  participants?: { threadId: string; rows: ReadonlyArray<{ address: string; entityId: string | null; role: 'primary' | 'participant' }> };
  /**
   * Message-IDs that now belong to a thread. An ID already known keeps its first thread; a
   * referenced-only ID that arrives as a real message in the same thread is upgraded to "seen".
   */
  threadKeys?: { mailboxId: string; threadId: string; keys: ReadonlyArray<{ messageId: string; kind: ThreadKeyMatch['kind'] }> };
}

const NOW_UTC = `(now() AT TIME ZONE 'UTC')`;
/** How much of the answered open items the summary's note keeps. */
const ANSWERED_NOTE_CHARS = 600;

/** Stores everything in one statement. Throws the driver's error on a constraint violation. */
export async function writeIngested(sql: SqlExecutor, write: IngestWrite): Promise<void> {
  const params: unknown[] = [];
  const p = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const steps: string[] = [];
  const { message: m } = write;

  if (write.newEntity) {
    const e = write.newEntity;
    steps.push(`INSERT INTO "Entity" ("id", "kind", "key", "name", "updatedAt")
      VALUES (${p(e.id)}, ${p(e.kind)}, ${p(e.key)}, ${p(e.name)}, ${NOW_UTC}) ON CONFLICT ("key") DO NOTHING`);
  }
  if (write.renameEntity) {
    steps.push(`UPDATE "Entity" SET "name" = ${p(write.renameEntity.name)}, "updatedAt" = ${NOW_UTC}
      WHERE "id" = ${p(write.renameEntity.id)} AND "name" IS NULL`);
  }
  if (write.attachAddress) {
    const a = write.attachAddress;
    steps.push(`INSERT INTO "EntityAddress" ("id", "entityId", "address", "displayName")
      VALUES (${p(a.id)}, ${p(a.entityId)}, ${p(a.address)}, ${p(a.displayName)}) ON CONFLICT ("address") DO NOTHING`);
  }
  if (write.newThread) {
    const t = write.newThread;
    steps.push(`INSERT INTO "Thread" ("id", "mailboxId", "entityId", "subject", "normalizedSubject", "lastMessageAt", "linkedThreadId", "needsPromotion", "updatedAt")
      VALUES (${p(t.id)}, ${p(t.mailboxId)}, ${p(t.entityId)}, ${p(t.subject)}, ${p(t.normalizedSubject)}, ${p(utcTimestamp(t.at))}::timestamp, ${p(t.linkedThreadId)}, true, ${NOW_UTC})`);
  }
  if (write.touchThread) {
    steps.push(`UPDATE "Thread"
      SET "lastMessageAt" = GREATEST("lastMessageAt", ${p(utcTimestamp(write.touchThread.at))}::timestamp), "needsPromotion" = true,
          "status" = 'open', "closedAt" = NULL, "updatedAt" = ${NOW_UTC}
      WHERE "id" = ${p(write.touchThread.id)}`);
  }
  if (write.teamReplied) {
    const t = write.teamReplied;
    const answered = t.answersOpenItems === true ? `jsonb_array_length("openItems") > 0` : 'false';
    // One UPDATE of the row (two in one statement would leave only one of them in effect).
    steps.push(`UPDATE "Thread" SET "lastMessageAt" = GREATEST("lastMessageAt", ${p(utcTimestamp(t.at))}::timestamp), "updatedAt" = ${NOW_UTC},
        "summary" = CASE WHEN ${answered} THEN btrim("summary" || E'\\n' || ${p(`The team replied on ${t.at.toISOString().slice(0, 10)} and answered: `)}
          || left((SELECT string_agg(x, '; ') FROM jsonb_array_elements_text("openItems") AS x), ${ANSWERED_NOTE_CHARS}) || '.', E' \\n') ELSE "summary" END,
        "openItems" = CASE WHEN ${answered} THEN '[]'::jsonb ELSE "openItems" END,
        "version" = CASE WHEN ${answered} THEN "version" + 1 ELSE "version" END
      WHERE "id" = ${p(t.id)}`);
    steps.push(`UPDATE "Message" SET "status" = 'replied'
      WHERE "threadId" = ${p(t.id)} AND "direction" = 'inbound' AND "status" = 'pending_reply'
        AND COALESCE("sentAt", "receivedAt") <= ${p(utcTimestamp(t.at))}::timestamp`);
  }
  if (write.handOff) {
    const h = write.handOff;
    steps.push(`UPDATE "Thread" SET "handoffReason" = ${p(h.reason.slice(0, 500))}, "handoffAt" = ${p(utcTimestamp(h.at))}::timestamp
      WHERE "id" = ${p(h.id)}`);
  }
  if (write.participants && write.participants.rows.length > 0) {
    const unique = [...new Map(write.participants.rows.map((r) => [r.address, r])).values()];
    steps.push(`INSERT INTO "ThreadParticipant" ("threadId", "address", "entityId", "role")
      SELECT ${p(write.participants.threadId)}, r."address", r."entityId", r."role"
      FROM jsonb_to_recordset(${p(JSON.stringify(unique))}::jsonb) AS r("address" text, "entityId" text, "role" text)
      ON CONFLICT ("threadId", "address") DO UPDATE SET "entityId" = COALESCE("ThreadParticipant"."entityId", EXCLUDED."entityId")`);
  }
  steps.push(`INSERT INTO "Message" (
      "id", "mailboxId", "messageId", "syntheticId", "threadId", "entityId", "direction", "author", "source", "imapFolder", "imapUid",
      "fromAddress", "fromName", "replyTo", "toAddresses", "ccAddresses", "subject", "inReplyTo", "references", "sentAt", "receivedAt",
      "bodyText", "extractedText", "attachments", "classification", "skipReason", "skipDetail", "authDmarc", "authDkim", "authSpf",
      "status", "sizeBytes", "attachmentText")
    VALUES (${[
      p(m.id),
      p(m.mailboxId),
      p(m.messageId),
      p(m.syntheticId),
      p(m.threadId),
      p(m.entityId),
      p(m.direction ?? 'inbound'),
      p(m.author ?? 'customer'),
      p(m.source),
      p(m.imapFolder),
      p(m.imapUid),
      p(m.fromAddress),
      p(m.fromName),
      p(m.replyTo),
      `${p(JSON.stringify(m.toAddresses))}::jsonb`,
      `${p(JSON.stringify(m.ccAddresses))}::jsonb`,
      p(m.subject),
      p(m.inReplyTo),
      `${p(JSON.stringify(m.references))}::jsonb`,
      m.sentAt ? `${p(utcTimestamp(m.sentAt))}::timestamp` : 'NULL',
      `${p(utcTimestamp(m.receivedAt))}::timestamp`,
      p(m.bodyText),
      p(m.extractedText),
      `${p(JSON.stringify(m.attachments))}::jsonb`,
      p(m.classification),
      p(m.skipReason),
      p(m.skipDetail),
      p(m.authDmarc),
      p(m.authDkim),
      p(m.authSpf),
      p(m.status),
      p(m.raw.length),
      p(m.attachmentText),
    ].join(', ')})`);
  steps.push(`INSERT INTO "MessageRaw" ("messageId", "raw") VALUES (${p(m.id)}, ${p(m.raw)}::bytea)`);
  if (write.threadKeys && write.threadKeys.keys.length > 0) {
    const k = write.threadKeys;
    const unique = [...new Map(k.keys.map((key) => [key.messageId, key])).values()];
    steps.push(`INSERT INTO "ThreadKey" ("mailboxId", "messageId", "threadId", "kind")
      SELECT ${p(k.mailboxId)}, r."messageId", ${p(k.threadId)}, r."kind"
      FROM jsonb_to_recordset(${p(JSON.stringify(unique))}::jsonb) AS r("messageId" text, "kind" text)
      ON CONFLICT ("mailboxId", "messageId") DO UPDATE SET "kind" = 'seen'
      WHERE "ThreadKey"."kind" = 'referenced' AND EXCLUDED."kind" <> 'referenced' AND "ThreadKey"."threadId" = EXCLUDED."threadId"`);
  }
  // Foreign keys are checked at the end of the statement, so the order of the steps does not matter.
  const statement = `WITH ${steps.map((step, i) => `s${i} AS (${step})`).join(',\n')} SELECT 1`;
  await sql.query(statement, params);
}

/** The message's Message-ID is already stored in this mailbox (a repeat, or a concurrent poller). */
export function isDuplicateMessage(error: unknown): boolean {
  const info = sqlErrorInfo(error);
  return info?.code === '23505' && info.constraint === 'Message_mailboxId_messageId_key';
}

/** A row the write pointed at changed under it (an entity created, a thread erased): look again. */
export function isStaleLookup(error: unknown): boolean {
  return sqlErrorInfo(error)?.code === '23503';
}

/**
 * The database refused a value itself, so retrying cannot help: a data exception (SQLSTATE class
 * 22) or a value beyond a limit such as an index entry's size (54000).
 */
export function isUnstorableValue(error: unknown): boolean {
  const code = sqlErrorInfo(error)?.code;
  return code !== undefined && (code.startsWith('22') || code === '54000');
}

/** The addresses of each thread's customer (every address of its entity, linked ones included). */
export async function customerAddressesOfThreads(sql: SqlExecutor, threadIds: readonly string[]): Promise<Map<string, string[]>> {
  if (threadIds.length === 0) return new Map();
  const rows = await sql.query(
    `SELECT t."id", coalesce(json_agg(a."address") FILTER (WHERE a."address" IS NOT NULL), '[]'::json) AS "addresses"
     FROM "Thread" t LEFT JOIN "EntityAddress" a ON a."entityId" = t."entityId"
     WHERE t."id" IN (SELECT jsonb_array_elements_text($1::jsonb)) GROUP BY t."id"`,
    [JSON.stringify(threadIds)],
  );
  const parsed = z.array(z.object({ id: z.string(), addresses: z.array(z.string()) })).parse(rows);
  return new Map(parsed.map((r) => [r.id, r.addresses]));
}
