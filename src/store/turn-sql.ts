/**
 * A reply turn's storage in three round trips, in plain SQL on the same pool as Prisma (as
 * ingestion does, src/store/ingest-store.ts): one statement starts or resumes the turn and claims
 * its messages, one read gathers the whole context (thread, customer, profile, loop counters,
 * recent replies), and one statement (data-modifying CTEs) commits everything the turn produced
 * (the loop guard's counters follow in a statement of their own, off the commit's lock: `LOOPS_SQL`).
 * A single statement needs no BEGIN/COMMIT and is atomic; the thread's version check makes a
 * commit that lost a race change nothing but the record of the model's token use.
 */
import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { LlmCallRecord } from '../llm/provider.ts';
import type { LoopState } from '../memory/loop-guard.ts';
import type { ContextTrace } from '../memory/profile-trace.ts';
import type { BufferMessage, FactCategory, ProfileState, ThreadState } from '../memory/types.ts';
import { utcTimestamp, type SqlExecutor } from './sql.ts';
import type { DraftFlag, ThreadRecord, TurnMessage } from './turns.ts';

/** A `timestamp` column as JSON ("2026-11-02T09:00:00.123", UTC without a zone) to a Date. */
const utc = z.string().transform((s) => new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`));
const stringArray = z.array(z.unknown()).transform((a) => a.filter((v): v is string => typeof v === 'string'));
const numberArray = z.array(z.unknown()).transform((a) => a.filter((v): v is number => typeof v === 'number'));

const messageRow = z.object({
  id: z.string(),
  messageId: z.string(),
  syntheticId: z.boolean(),
  fromName: z.string().nullable(),
  fromAddress: z.string().nullable(),
  sentAt: utc.nullable(),
  receivedAt: utc,
  extractedText: z.string(),
  attachmentText: z.string().catch(''),
  subject: z.string(),
  references: z.unknown(),
  replyTo: z.string().nullable(),
  authDmarc: z.string().nullable(),
  toAddresses: z.unknown(),
  ccAddresses: z.unknown(),
});

const beginRow = z.object({ turn_id: z.string().nullable(), resumed: z.boolean(), messages: z.array(messageRow) });

const MESSAGE_COLUMNS = `"id", "messageId", "syntheticId", "fromName", "fromAddress", "sentAt", "receivedAt", "extractedText", "attachmentText", "subject", "references", "replyTo", "authDmarc", "toAddresses", "ccAddresses"`;

const BEGIN_SQL = `
WITH running AS (
  SELECT "id" FROM "Turn" WHERE "threadId" = $1 AND "status" = 'running' ORDER BY "startedAt" ASC LIMIT 1
), oldest AS (
  SELECT "fromAddress" FROM "Message"
  WHERE "threadId" = $1 AND "status" = 'pending_reply' AND "direction" = 'inbound' AND NOT EXISTS (SELECT 1 FROM running)
  ORDER BY "sentAt" ASC NULLS LAST, "receivedAt" ASC, "id" ASC LIMIT 1
), new_turn AS (
  INSERT INTO "Turn" ("id", "threadId", "status", "startedAt") SELECT $2, $1, 'running', $3::timestamp FROM oldest RETURNING "id"
), claimed AS (
  UPDATE "Message" SET "status" = 'in_turn', "turnId" = $2
  WHERE "threadId" = $1 AND "status" = 'pending_reply' AND "direction" = 'inbound'
    AND EXISTS (SELECT 1 FROM oldest) AND "fromAddress" IS NOT DISTINCT FROM (SELECT "fromAddress" FROM oldest)
  RETURNING ${MESSAGE_COLUMNS}
), resumed AS (
  SELECT ${MESSAGE_COLUMNS} FROM "Message" WHERE "turnId" = (SELECT "id" FROM running) AND "direction" = 'inbound'
)
SELECT
  coalesce((SELECT "id" FROM running), (SELECT "id" FROM new_turn)) AS turn_id,
  EXISTS (SELECT 1 FROM running) AS resumed,
  (SELECT coalesce(json_agg(m), '[]'::json) FROM (SELECT * FROM claimed UNION ALL SELECT * FROM resumed) m) AS messages`;

export interface BegunTurn {
  turnId: string;
  resumed: boolean;
  /** Oldest first; the last one is the message the reply answers. */
  messages: TurnMessage[];
}

/**
 * The turn to run for a thread: an unfinished one left by a crashed attempt (so a retry finishes
 * the same turn and never makes a second draft), else a new turn that claims every message
 * waiting for a reply from the sender of the oldest one. One turn answers one correspondent:
 * mail from someone else in the thread waits for the next turn, so nobody's words are shown in a
 * prompt whose reply goes to another person. Null when nothing is waiting.
 */
export async function beginTurn(sql: SqlExecutor, threadId: string, newTurnId: string, now: Date): Promise<BegunTurn | null> {
  const rows = await sql.query(BEGIN_SQL, [threadId, newTurnId, utcTimestamp(now)]);
  const row = beginRow.parse(rows[0]);
  if (!row.turn_id || row.messages.length === 0) return null;
  const messages = row.messages
    .map((m) => ({
      id: m.id,
      messageId: m.messageId,
      syntheticId: m.syntheticId,
      fromName: m.fromName,
      fromAddress: m.fromAddress ?? '',
      date: m.sentAt ?? m.receivedAt,
      text: m.extractedText,
      attachmentText: m.attachmentText,
      subject: m.subject,
      references: stringArray.catch([]).parse(m.references),
      replyTo: m.replyTo,
      authDmarc: m.authDmarc,
      toAddresses: stringArray.catch([]).parse(m.toAddresses),
      ccAddresses: stringArray.catch([]).parse(m.ccAddresses),
      order: [m.sentAt?.getTime() ?? Number.POSITIVE_INFINITY, m.receivedAt.getTime()] as const,
    }))
    .sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(({ order: _order, ...m }) => m);
  return { turnId: row.turn_id, resumed: row.resumed, messages };
}

const contextRow = z.object({
  thread: z
    .object({
      id: z.string(),
      mailboxId: z.string(),
      entityId: z.string(),
      version: z.number(),
      lastMessageAt: utc,
      subject: z.string(),
      summary: z.string(),
      openItems: stringArray,
      currentIntent: z.string(),
      tags: stringArray,
      pinnedItems: stringArray,
      status: z.string(),
    })
    .nullable(),
  customer: z
    .object({
      id: z.string(),
      kind: z.string(),
      key: z.string(),
      name: z.string().nullable(),
      addresses: stringArray,
      facts: z.array(
        z.object({
          id: z.string(),
          key: z.string(),
          value: z.string(),
          category: z.string(),
          confidence: z.number(),
          origin: z.string(),
          expiresAt: utc.nullable(),
          validFrom: utc.nullable().catch(null),
          tags: stringArray.nullable().catch([]),
        }),
      ),
      commitments: z.array(z.object({ text: z.string(), due: z.string().nullable(), dueAt: utc.nullable(), overdue: z.boolean() })),
      pastThreads: z.array(
        z.object({ id: z.string(), topic: z.string().nullable(), closedAt: utc.nullable(), tags: stringArray.catch([]) }),
      ),
    })
    .nullable(),
  loops: z.array(
    z.object({
      scope: z.string(),
      consecutive: z.number(),
      fingerprints: z.unknown(),
      lastReply: z.unknown(),
      stoppedAt: utc.nullable(),
      updatedAt: utc,
    }),
  ),
  replies: z.object({ rh: z.number(), th: z.number(), rd: z.number(), td: z.number() }),
  unseen: z.object({ count: z.number(), oldest: utc.nullable() }),
  buffer: z.array(z.object({ direction: z.enum(['inbound', 'outbound']), source: z.string(), at: utc, text: z.string() })),
});

const CONTEXT_SQL = `
SELECT
  (SELECT json_build_object('id', t."id", 'mailboxId', t."mailboxId", 'entityId', t."entityId", 'version', t."version",
      'lastMessageAt', t."lastMessageAt", 'subject', t."subject", 'summary', t."summary", 'openItems', t."openItems",
      'currentIntent', t."currentIntent", 'tags', t."tags", 'pinnedItems', t."pinnedItems", 'status', t."status")
   FROM "Thread" t WHERE t."id" = $1) AS thread,
  (SELECT json_build_object('id', e."id", 'kind', e."kind", 'key', e."key", 'name', e."name",
      'addresses', (SELECT coalesce(json_agg(a."address" ORDER BY a."address"), '[]'::json) FROM "EntityAddress" a WHERE a."entityId" = e."id"),
      'facts', (SELECT coalesce(json_agg(json_build_object('id', f."id", 'key', f."key", 'value', f."value", 'category', f."category",
                  'confidence', f."confidence", 'origin', f."origin", 'expiresAt', f."expiresAt",
                  'validFrom', coalesce(f."validFrom", f."createdAt"),
                  'tags', CASE WHEN jsonb_array_length(f."tags") > 0 THEN f."tags"
                               ELSE (SELECT st."tags" FROM "Thread" st WHERE st."id" = f."sourceThreadId") END) ORDER BY f."key", f."createdAt"), '[]'::json)
                FROM "ProfileFact" f WHERE f."entityId" = e."id" AND f."status" = 'active'),
      'commitments', (SELECT coalesce(json_agg(json_build_object('text', c."text", 'due', c."due", 'dueAt', c."dueAt",
                        'overdue', c."status" = 'overdue' OR (c."dueAt" IS NOT NULL AND c."dueAt" < $6::timestamp)) ORDER BY c."createdAt"), '[]'::json)
                      FROM "Commitment" c WHERE c."entityId" = e."id" AND c."status" IN ('open', 'overdue')),
      'pastThreads', (SELECT coalesce(json_agg(json_build_object('id', p."id", 'topic', p."topic", 'closedAt', p."closedAt", 'tags', p."tags")), '[]'::json)
                      FROM (SELECT "id", "topic", "closedAt", "tags" FROM "Thread" WHERE "entityId" = e."id" AND "topic" IS NOT NULL
                            ORDER BY "closedAt" DESC NULLS FIRST LIMIT 20) p))
   FROM "Entity" e WHERE e."id" = (SELECT "entityId" FROM "Thread" WHERE "id" = $1)) AS customer,
  (SELECT coalesce(json_agg(json_build_object('scope', l."scope", 'consecutive', l."consecutive", 'fingerprints', l."fingerprints",
      'lastReply', l."lastReply", 'stoppedAt', l."stoppedAt", 'updatedAt', l."updatedAt")), '[]'::json)
   FROM "LoopState" l WHERE l."scope" IN (SELECT jsonb_array_elements_text($2::jsonb))) AS loops,
  (SELECT json_build_object(
      'rh', count(*) FILTER (WHERE "toAddress" = $3 AND "createdAt" >= $4::timestamp),
      'th', count(*) FILTER (WHERE "threadId" = $1 AND "createdAt" >= $4::timestamp),
      'rd', count(*) FILTER (WHERE "toAddress" = $3),
      'td', count(*) FILTER (WHERE "threadId" = $1))
   FROM "Draft" WHERE ("toAddress" = $3 OR "threadId" = $1) AND "createdAt" >= $5::timestamp AND "status" <> 'discarded') AS replies,
  (SELECT json_build_object('count', count(*), 'oldest', min(coalesce(m."sentAt", m."receivedAt")))
   FROM "Message" m JOIN "Thread" t ON t."id" = m."threadId"
   WHERE m."threadId" = $1 AND m."direction" = 'inbound' AND m."skipReason" IS NULL AND m."promotedBy" IS NULL
     AND m."entityId" = t."entityId") AS unseen,
  (SELECT coalesce(json_agg(b ORDER BY b."receivedAt" ASC, b."id" ASC), '[]'::json) FROM (
     SELECT m."id", m."receivedAt", m."direction", m."source", coalesce(m."sentAt", m."receivedAt") AS "at", left(coalesce(d."body", m."extractedText"), $8) AS "text"
     FROM "Message" m
     LEFT JOIN "Draft" d ON m."direction" = 'outbound' AND d."messageId" = m."messageId"
     LEFT JOIN "Turn" tu ON tu."id" = d."turnId"
     WHERE m."threadId" = $1 AND m."turnId" IS DISTINCT FROM $7 AND m."skipReason" IS NULL
       AND ((m."direction" = 'inbound' AND m."status" NOT IN ('pending_reply', 'in_turn')
             AND m."entityId" = (SELECT "entityId" FROM "Thread" WHERE "id" = $1))
         OR (m."direction" = 'outbound' AND coalesce(d."status", '') <> 'discarded' AND tu."error" IS NULL))
     ORDER BY m."receivedAt" DESC, m."id" DESC LIMIT $9) b) AS buffer`;

export interface TurnContextRecords {
  thread: ThreadRecord;
  /** The thread's customer: its addresses, and its domain when it is a company domain. */
  customer: { addresses: string[]; domain: string | null };
  profile: ProfileState;
  /** Stored loop-guard states of the scopes asked for (scopes never seen are missing). */
  loopStates: LoopState[];
  recentReplies: { toRecipientHour: number; inThreadHour: number; toRecipientDay: number; inThreadDay: number };
  /** The customer's messages in the thread no promotion pass has seen yet (the turn's own included). */
  unseen: { count: number; oldestAt: Date | null };
  /**
   * The thread's latest exchanges before this turn, oldest first: the customer's earlier messages
   * and the replies (the agent's drafts not discarded, the team's sent mail), at most `bufferMessages`.
   * Ordered by our own clock (`receivedAt`): a sender's Date header can be days off.
   */
  buffer: BufferMessage[];
}

/** Characters of one buffered message loaded (the prompt's share cuts it far shorter). */
const BUFFER_TEXT_CHARS = 4000;

/** Everything a turn reads besides its messages, in one query. */
export async function loadTurnContext(
  sql: SqlExecutor,
  query: {
    threadId: string;
    turnId: string;
    recipient: string;
    loopScopes: readonly string[];
    hourAgo: Date;
    dayAgo: Date;
    now: Date;
    bufferMessages: number;
  },
): Promise<TurnContextRecords> {
  const rows = await sql.query(CONTEXT_SQL, [
    query.threadId,
    JSON.stringify(query.loopScopes),
    query.recipient,
    utcTimestamp(query.hourAgo),
    utcTimestamp(query.dayAgo),
    utcTimestamp(query.now),
    query.turnId,
    BUFFER_TEXT_CHARS,
    query.bufferMessages,
  ]);
  const row = contextRow.parse(rows[0]);
  const t = row.thread;
  const e = row.customer;
  if (!t || !e) throw new AppError('NOT_FOUND', `thread ${query.threadId} no longer exists`);
  const state: ThreadState = {
    subject: t.subject,
    summary: t.summary,
    openItems: t.openItems,
    currentIntent: t.currentIntent,
    tags: t.tags,
    pinnedItems: t.pinnedItems,
    status: t.status,
  };
  return {
    thread: { id: t.id, mailboxId: t.mailboxId, entityId: t.entityId, version: t.version, lastMessageAt: t.lastMessageAt, state },
    customer: e.kind === 'domain' ? { addresses: e.addresses, domain: e.key } : { addresses: [...e.addresses, e.key], domain: null },
    profile: {
      entityId: e.id,
      name: e.name,
      facts: e.facts.map((f) => ({ ...f, category: f.category as FactCategory, tags: f.tags ?? [] })),
      pastThreads: e.pastThreads.map((p) => ({ threadId: p.id, topic: p.topic ?? '', closedAt: p.closedAt, tags: p.tags })),
      outstandingCommitments: e.commitments,
    },
    loopStates: row.loops.map((l) => ({
      scope: l.scope,
      consecutive: l.consecutive,
      fingerprints: z.array(numberArray).catch([]).parse(l.fingerprints),
      lastReply: numberArray.catch([]).parse(l.lastReply),
      stoppedAt: l.stoppedAt,
      updatedAt: l.updatedAt,
    })),
    recentReplies: {
      toRecipientHour: row.replies.rh,
      inThreadHour: row.replies.th,
      toRecipientDay: row.replies.rd,
      inThreadDay: row.replies.td,
    },
    unseen: { count: row.unseen.count, oldestAt: row.unseen.oldest },
    buffer: row.buffer.map((b) => ({
      direction: b.direction,
      author: b.direction === 'inbound' ? 'customer' : b.source === 'agent' ? 'agent' : 'staff',
      date: b.at,
      text: b.text,
    })),
  };
}

const COMMIT_SQL = `
WITH c AS (SELECT $1::jsonb AS j),
upd AS (
  UPDATE "Thread" t SET
    "summary" = c.j->'state'->>'summary', "openItems" = c.j->'state'->'openItems', "currentIntent" = c.j->'state'->>'currentIntent',
    "tags" = c.j->'state'->'tags', "pinnedItems" = c.j->'state'->'pinnedItems', "status" = c.j->'state'->>'status',
    "closedAt" = CASE WHEN c.j->'state'->>'status' = 'resolved' THEN (c.j->>'now')::timestamp ELSE NULL END,
    "version" = t."version" + 1, "updatedAt" = (c.j->>'now')::timestamp
  FROM c WHERE t."id" = c.j->>'threadId' AND t."version" = (c.j->>'version')::int
  RETURNING t."id"
), draft AS (
  INSERT INTO "Draft" ("id", "turnId", "threadId", "mailboxId", "toAddress", "ccAddresses", "subject", "body", "messageId", "inReplyTo", "references",
                       "needsHuman", "flags", "citations", "status", "createdAt", "updatedAt")
  SELECT d->>'id', c.j->>'turnId', c.j->>'threadId', c.j->>'mailboxId', d->>'toAddress', coalesce(d->'ccAddresses', '[]'::jsonb), d->>'subject', d->>'body', d->>'messageId',
         d->>'inReplyTo', d->'references', (d->>'needsHuman')::boolean, d->'flags', coalesce(d->'citations', '[]'::jsonb), d->>'status', (c.j->>'now')::timestamp, (c.j->>'now')::timestamp
  FROM c CROSS JOIN upd CROSS JOIN LATERAL (SELECT c.j->'draft' AS d) x
  RETURNING "id"
), outbound AS (
  INSERT INTO "Message" ("id", "mailboxId", "messageId", "threadId", "direction", "author", "source", "fromAddress", "fromName", "toAddresses", "ccAddresses", "subject",
                         "inReplyTo", "references", "sentAt", "receivedAt", "bodyText", "extractedText", "status")
  SELECT c.j->>'outboundId', c.j->>'mailboxId', d->>'messageId', c.j->>'threadId', 'outbound', 'agent', 'agent', c.j->>'fromAddress', c.j->>'fromName',
         jsonb_build_array(d->>'toAddress'), coalesce(d->'ccAddresses', '[]'::jsonb), d->>'subject', d->>'inReplyTo', d->'references', (c.j->>'now')::timestamp, (c.j->>'now')::timestamp,
         d->>'body', d->>'body', d->>'status'
  FROM c CROSS JOIN upd CROSS JOIN LATERAL (SELECT c.j->'draft' AS d) x
  RETURNING "id"
), superseded AS (
  -- A newer turn's draft replaces every draft of the thread still waiting for a person: only the
  -- newest is approvable; the older ones leave the console and (by the outbox) the Drafts folder.
  UPDATE "Draft" o SET "status" = 'discarded', "outcome" = 'superseded', "outcomeMessageId" = c.j->'draft'->>'messageId',
    "outcomeAt" = (c.j->>'now')::timestamp, "updatedAt" = (c.j->>'now')::timestamp
  FROM c WHERE o."threadId" = c.j->>'threadId' AND o."status" = 'draft' AND o."outcome" = 'pending' AND EXISTS (SELECT 1 FROM upd)
  RETURNING o."mailboxId", o."messageId"
), superseded_rows AS (
  UPDATE "Message" m SET "status" = 'discarded' FROM superseded s
  WHERE m."mailboxId" = s."mailboxId" AND m."messageId" = s."messageId" AND m."direction" = 'outbound' AND m."author" = 'agent'
  RETURNING 1
), thread_key AS (
  INSERT INTO "ThreadKey" ("mailboxId", "messageId", "threadId", "kind")
  SELECT c.j->>'mailboxId', c.j->'draft'->>'messageId', c.j->>'threadId', 'outbound' FROM c CROSS JOIN upd
  ON CONFLICT DO NOTHING RETURNING 1
), replied AS (
  UPDATE "Message" m SET "status" = 'replied' FROM c WHERE m."turnId" = c.j->>'turnId' AND EXISTS (SELECT 1 FROM upd) RETURNING 1
), turn AS (
  UPDATE "Turn" tu SET "status" = c.j->'turn'->>'status', "provider" = c.j->'turn'->>'provider', "model" = c.j->'turn'->>'model',
    "prompt" = c.j->'turn'->>'prompt', "promptTokens" = (c.j->'turn'->>'promptTokens')::int,
    "completionTokens" = (c.j->'turn'->>'completionTokens')::int, "error" = c.j->'turn'->>'error', "finishedAt" = (c.j->>'now')::timestamp,
    "contextTrace" = c.j->'turn'->'contextTrace'
  FROM c WHERE tu."id" = c.j->>'turnId' AND EXISTS (SELECT 1 FROM upd) RETURNING 1
), calls AS (
  INSERT INTO "LlmCall" ("id", "purpose", "provider", "model", "threadId", "promptTokens", "completionTokens", "ok", "createdAt")
  SELECT x."id", x."purpose", c.j->'turn'->>'provider', c.j->'turn'->>'model', c.j->>'threadId', x."promptTokens", x."completionTokens", x."ok",
         (c.j->>'now')::timestamp
  FROM c CROSS JOIN jsonb_to_recordset(c.j->'calls') AS x("id" text, "purpose" text, "promptTokens" int, "completionTokens" int, "ok" boolean)
  RETURNING 1
)
SELECT (SELECT count(*) FROM upd)::int AS updated,
  (SELECT count(*) FROM "Message" WHERE "threadId" = (SELECT j->>'threadId' FROM c) AND "status" = 'pending_reply' AND "direction" = 'inbound')::int AS pending`;

/**
 * The loop guard's counters, written after the commit in a statement of their own, with
 * `synchronous_commit` off for that statement only. Replies to many customers of one company
 * domain update the same `LoopState` row (its `domain:` scope): inside the turn's commit, every
 * such commit held that row's lock until its WAL flush, so concurrent turns queued behind each
 * other (issue 25). Here the lock lasts the upsert alone. What this gives up: a crash in the few
 * milliseconds before the WAL writer flushes may lose the last replies' counts (the draft, which
 * is durable, never depends on them). Rows are written in scope order, so two turns sharing
 * scopes cannot deadlock.
 */
const LOOPS_SQL = `
WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true) AS v)
INSERT INTO "LoopState" ("scope", "consecutive", "fingerprints", "lastReply", "stoppedAt", "updatedAt")
SELECT x."scope", x."consecutive", x."fingerprints", x."lastReply", x."stoppedAt"::timestamp, x."updatedAt"::timestamp
FROM cfg CROSS JOIN jsonb_to_recordset($1::jsonb) AS x("scope" text, "consecutive" int, "fingerprints" jsonb, "lastReply" jsonb, "stoppedAt" text, "updatedAt" text)
ORDER BY x."scope"
ON CONFLICT ("scope") DO UPDATE SET "consecutive" = EXCLUDED."consecutive", "fingerprints" = EXCLUDED."fingerprints",
  "lastReply" = EXCLUDED."lastReply", "stoppedAt" = EXCLUDED."stoppedAt", "updatedAt" = EXCLUDED."updatedAt"`;

export interface TurnCommitSql {
  turnId: string;
  thread: { id: string; mailboxId: string; version: number };
  nextState: ThreadState;
  draft: {
    id: string;
    toAddress: string;
    /** Who the reply is copied to (src/memory/reply-cc.ts). */
    ccAddresses?: readonly string[];
    subject: string;
    body: string;
    messageId: string;
    inReplyTo: string | null;
    references: string[];
    needsHuman: boolean;
    status: 'draft' | 'queued';
    flags: DraftFlag[];
    /** The reply's citations, as the model gave them (the gate's findings are in `flags`). */
    citations?: ReadonlyArray<{ sentence: string; source: string; quote: string }>;
  };
  /** Id of the outbound message row that mirrors the draft. */
  outboundId: string;
  from: { address: string; name: string };
  turn: {
    status: string;
    provider: string;
    model: string;
    prompt: string | null;
    promptTokens: number;
    completionTokens: number;
    error: string | null;
    /** Why each profile fact was or was not in the prompt (null when the turn had no prompt). */
    contextTrace: ContextTrace | null;
  };
  loopStates: readonly LoopState[];
  /** The model calls the turn made, with their ids. */
  calls: ReadonlyArray<LlmCallRecord & { id: string }>;
  now: Date;
}

/**
 * Commits a turn in one statement: thread state (version-checked), exactly one draft (unique per
 * turn), the outbound message so replies thread to it, the claimed messages marked replied, the
 * turn record and the model calls' token use; then the loop guard's counters (`LOOPS_SQL`). Returns how many
 * messages still wait in the thread. A thread changed meanwhile (a console edit, a concurrent
 * turn) commits nothing but the token use and throws CONFLICT, so the turn is retried.
 */
export async function commitTurnSql(sql: SqlExecutor, c: TurnCommitSql): Promise<{ pending: number }> {
  const payload = {
    turnId: c.turnId,
    threadId: c.thread.id,
    mailboxId: c.thread.mailboxId,
    version: c.thread.version,
    state: c.nextState,
    draft: c.draft,
    outboundId: c.outboundId,
    fromAddress: c.from.address,
    fromName: c.from.name,
    turn: c.turn,
    calls: c.calls,
    now: utcTimestamp(c.now),
  };
  const rows = await sql.query(COMMIT_SQL, [JSON.stringify(payload)]);
  const row = z.object({ updated: z.number(), pending: z.number() }).parse(rows[0]);
  if (row.updated === 0) throw new AppError('CONFLICT', `thread ${c.thread.id} changed during the turn; retrying`);
  if (c.loopStates.length > 0) {
    const loops = c.loopStates.map((s) => ({
      ...s,
      stoppedAt: s.stoppedAt ? utcTimestamp(s.stoppedAt) : null,
      updatedAt: utcTimestamp(s.updatedAt),
    }));
    await sql.query(LOOPS_SQL, [JSON.stringify(loops)]);
  }
  return { pending: row.pending };
}
