/**
 * Every database step of erasing a customer, in one transaction (the story is told by
 * src/app/erase-customer.ts):
 *
 * 1. what the customer owns is deleted, children first, each table counted: the entity, its
 *    addresses, facts, decisions and commitments; its threads with their messages, drafts, turns,
 *    promotion runs, participants, thread keys and LLM-call rows; its own messages and our replies
 *    to it in other people's threads (and their originals). A turn elsewhere that carried one of
 *    its messages keeps its row, but its prompt is replaced (`ERASED_PROMPT`).
 * 2. everywhere else, every column in `ERASURE_COLUMNS` marked `text` or `json` is searched and
 *    redacted: PostgreSQL picks the candidate rows with plain substring tests (`strpos` on
 *    `lower(...)`, see `searchPlan`), and the exact, case-insensitive redaction runs in JavaScript
 *    on those rows only, written back in batches. Participant and thread-key rows naming an
 *    address of the customer are deleted (the address is part of their key).
 * 3. stored originals (`MessageRaw.raw`) of the messages that stay are searched as bytes
 *    (`encode(raw, 'escape')`, safe for any byte, plus base64 spellings) and, with every message
 *    whose columns mentioned the customer, rewritten by the caller's `redactOriginal`.
 *
 * Works on PostgreSQL and PGlite alike (temporary tables, `strpos`, `jsonb_to_recordset`).
 */
import { AppError } from '../errors.ts';
import type { Anchor } from '../mail/erasure-patterns.ts';
import type { ErasedOriginalSource, RawOutcome } from '../mail/raw-redaction.ts';
import type { Db } from './database.ts';

/**
 * How erasure treats a column: `text` and `json` are redacted, `original` is the raw mail,
 * `delete-row` removes the row when the column names the customer (it is part of a key),
 * `exempt` says why the column cannot hold what a customer wrote.
 */
export type ColumnTreatment = 'text' | 'json' | 'original' | 'delete-row' | 'exempt';

export interface ErasureColumn {
  table: string;
  column: string;
  treatment: ColumnTreatment;
  why?: string;
}

const ID = 'an identifier the product generates';
const ENUM = 'one of a fixed set of values';
const OURS = "the support mailbox's own configuration";
const KB = "the team's own knowledge base, imported by an operator: no customer data";
const IDENTITY = "another customer's identity key (erase that customer to remove it)";

const col = (table: string, column: string, treatment: ColumnTreatment, why?: string): ErasureColumn =>
  why ? { table, column, treatment, why } : { table, column, treatment };

/**
 * Every String, Json and Bytes column of prisma/schema.prisma and what erasure does with it. A
 * test compares this list with the schema, so a new text column cannot be forgotten.
 */
export const ERASURE_COLUMNS: readonly ErasureColumn[] = [
  col('Mailbox', 'id', 'exempt', ID),
  col('Mailbox', 'address', 'exempt', OURS),
  col('Mailbox', 'displayName', 'exempt', OURS),
  col('Mailbox', 'pollerLastError', 'text'),
  col('MailboxCheckpoint', 'mailboxId', 'exempt', ID),
  col('MailboxCheckpoint', 'folder', 'exempt', OURS),
  col('Entity', 'id', 'exempt', ID),
  col('Entity', 'kind', 'exempt', ENUM),
  col('Entity', 'key', 'exempt', IDENTITY),
  col('Entity', 'name', 'text'),
  col('EntityAddress', 'id', 'exempt', ID),
  col('EntityAddress', 'entityId', 'exempt', ID),
  col('EntityAddress', 'address', 'exempt', IDENTITY),
  col('EntityAddress', 'displayName', 'text'),
  col('Thread', 'id', 'exempt', ID),
  col('Thread', 'mailboxId', 'exempt', ID),
  col('Thread', 'entityId', 'exempt', ID),
  col('Thread', 'subject', 'text'),
  col('Thread', 'normalizedSubject', 'text'),
  col('Thread', 'summary', 'text'),
  col('Thread', 'openItems', 'json'),
  col('Thread', 'currentIntent', 'text'),
  col('Thread', 'tags', 'json'),
  col('Thread', 'pinnedItems', 'json'),
  col('Thread', 'status', 'exempt', ENUM),
  col('Thread', 'topic', 'text'),
  col('Thread', 'linkedThreadId', 'exempt', `${ID} (links to an erased thread are cleared)`),
  col('Thread', 'handoffReason', 'text'),
  col('Thread', 'promotionError', 'text'),
  col('ThreadParticipant', 'threadId', 'exempt', ID),
  col('ThreadParticipant', 'address', 'delete-row'),
  col('ThreadParticipant', 'entityId', 'exempt', ID),
  col('ThreadParticipant', 'role', 'exempt', ENUM),
  col('ThreadKey', 'mailboxId', 'exempt', ID),
  col('ThreadKey', 'messageId', 'delete-row'),
  col('ThreadKey', 'threadId', 'exempt', ID),
  col('ThreadKey', 'kind', 'exempt', ENUM),
  col('Message', 'id', 'exempt', ID),
  col('Message', 'mailboxId', 'exempt', ID),
  col('Message', 'messageId', 'exempt', 'the unique key threading uses; a Message-ID the customer made goes with its message'),
  col('Message', 'threadId', 'exempt', ID),
  col('Message', 'entityId', 'exempt', ID),
  col('Message', 'direction', 'exempt', ENUM),
  col('Message', 'author', 'exempt', ENUM),
  col('Message', 'source', 'exempt', ENUM),
  col('Message', 'fromAddress', 'text'),
  col('Message', 'fromName', 'text'),
  col('Message', 'replyTo', 'text'),
  col('Message', 'toAddresses', 'json'),
  col('Message', 'ccAddresses', 'json'),
  col('Message', 'subject', 'text'),
  col('Message', 'inReplyTo', 'text'),
  col('Message', 'references', 'json'),
  col('Message', 'bodyText', 'text'),
  col('Message', 'extractedText', 'text'),
  col('Message', 'attachments', 'json'),
  col('Message', 'attachmentText', 'text'),
  col('Message', 'classification', 'exempt', ENUM),
  col('Message', 'skipReason', 'exempt', ENUM),
  col('Message', 'skipDetail', 'text'),
  col('Message', 'authDmarc', 'exempt', ENUM),
  col('Message', 'authDkim', 'exempt', ENUM),
  col('Message', 'authSpf', 'exempt', ENUM),
  col('Message', 'status', 'exempt', ENUM),
  col('Message', 'turnId', 'exempt', ID),
  col('Message', 'imapFolder', 'exempt', OURS),
  col('Message', 'promotedBy', 'exempt', `${ID} (the promotion pass that was shown the message)`),
  col('MessageRaw', 'messageId', 'exempt', ID),
  col('MessageRaw', 'raw', 'original'),
  col('Turn', 'id', 'exempt', ID),
  col('Turn', 'threadId', 'exempt', ID),
  col('Turn', 'status', 'exempt', ENUM),
  col('Turn', 'provider', 'exempt', OURS),
  col('Turn', 'model', 'exempt', OURS),
  col('Turn', 'prompt', 'text'),
  col('Turn', 'error', 'text'),
  col('Turn', 'contextTrace', 'json'),
  col('Draft', 'id', 'exempt', ID),
  col('Draft', 'turnId', 'exempt', ID),
  col('Draft', 'threadId', 'exempt', ID),
  col('Draft', 'mailboxId', 'exempt', ID),
  col('Draft', 'toAddress', 'text'),
  col('Draft', 'ccAddresses', 'json'),
  col('Draft', 'subject', 'text'),
  col('Draft', 'body', 'text'),
  col('Draft', 'messageId', 'exempt', `${ID} (on the support domain, signed)`),
  col('Draft', 'inReplyTo', 'text'),
  col('Draft', 'references', 'json'),
  col('Draft', 'status', 'exempt', ENUM),
  col('Draft', 'outcome', 'exempt', ENUM),
  col('Draft', 'outcomeMatch', 'exempt', ENUM),
  col('Draft', 'outcomeMessageId', 'text'),
  col('Draft', 'error', 'text'),
  col('Draft', 'flags', 'json'),
  col('Draft', 'citations', 'json'),
  col('ProfileFact', 'id', 'exempt', ID),
  col('ProfileFact', 'entityId', 'exempt', ID),
  col('ProfileFact', 'key', 'text'),
  col('ProfileFact', 'value', 'text'),
  col('ProfileFact', 'category', 'exempt', ENUM),
  col('ProfileFact', 'origin', 'exempt', ENUM),
  col('ProfileFact', 'sourceMessageId', 'text'),
  col('ProfileFact', 'sourceThreadId', 'exempt', ID),
  col('ProfileFact', 'evidence', 'text'),
  col('ProfileFact', 'status', 'exempt', ENUM),
  col('ProfileFact', 'supersededById', 'exempt', ID),
  col('ProfileFact', 'decisionId', 'exempt', ID),
  col('ProfileFact', 'tags', 'json'),
  col('PromotionRun', 'id', 'exempt', ID),
  col('PromotionRun', 'threadId', 'exempt', ID),
  col('PromotionRun', 'trigger', 'exempt', ENUM),
  col('PromotionRun', 'topic', 'text'),
  col('PromotionRun', 'policyVersion', 'exempt', OURS),
  col('PromotionRun', 'coveredMessageIds', 'json'),
  col('PromotionRun', 'error', 'text'),
  col('PromotionDecision', 'id', 'exempt', ID),
  col('PromotionDecision', 'entityId', 'exempt', ID),
  col('PromotionDecision', 'runId', 'exempt', ID),
  col('PromotionDecision', 'origin', 'exempt', ENUM),
  col('PromotionDecision', 'key', 'text'),
  col('PromotionDecision', 'value', 'text'),
  col('PromotionDecision', 'category', 'exempt', ENUM),
  col('PromotionDecision', 'evidence', 'text'),
  col('PromotionDecision', 'sourceMessageId', 'text'),
  col('PromotionDecision', 'rule', 'exempt', ENUM),
  col('PromotionDecision', 'reason', 'text'),
  col('PromotionDecision', 'factId', 'exempt', ID),
  col('Commitment', 'id', 'exempt', ID),
  col('Commitment', 'entityId', 'exempt', ID),
  col('Commitment', 'threadId', 'exempt', ID),
  col('Commitment', 'text', 'text'),
  col('Commitment', 'due', 'text'),
  col('Commitment', 'sourceMessageId', 'text'),
  col('Commitment', 'closedByMessageId', 'text'),
  col('Commitment', 'closeEvidence', 'text'),
  col('Commitment', 'tags', 'json'),
  col('Commitment', 'status', 'exempt', ENUM),
  col('LlmCall', 'id', 'exempt', ID),
  col('LlmCall', 'purpose', 'exempt', ENUM),
  col('LlmCall', 'provider', 'exempt', OURS),
  col('LlmCall', 'model', 'exempt', OURS),
  col('LlmCall', 'threadId', 'exempt', ID),
  col('LoopState', 'scope', 'delete-row'),
  col('LoopState', 'fingerprints', 'exempt', 'hashed shingles of recent messages: no readable text'),
  col('LoopState', 'lastReply', 'exempt', 'hashed shingles of a reply: no readable text'),
  col('Setting', 'key', 'exempt', OURS),
  col('Setting', 'value', 'exempt', 'installation secrets the product generates'),
  col('ConsoleSession', 'tokenHash', 'exempt', 'a hash of a login token'),
  col('ConsoleSession', 'csrfToken', 'exempt', 'a random token'),
  col('ConsoleSession', 'passwordCheck', 'exempt', 'an HMAC of a login token'),
  col('KbDocument', 'id', 'exempt', ID),
  col('KbDocument', 'source', 'exempt', KB),
  col('KbDocument', 'title', 'exempt', KB),
  col('KbDocument', 'format', 'exempt', ENUM),
  col('KbDocument', 'lang', 'exempt', ENUM),
  col('KbDocument', 'tags', 'exempt', KB),
  col('KbDocument', 'contentHash', 'exempt', KB),
  col('KbPassage', 'id', 'exempt', ID),
  col('KbPassage', 'documentId', 'exempt', ID),
  col('KbPassage', 'titlePath', 'exempt', KB),
  col('KbPassage', 'text', 'exempt', KB),
  col('KbPassage', 'searchText', 'exempt', KB),
  col('KbPassage', 'inputHash', 'exempt', KB),
  col('KbPassage', 'embeddingModel', 'exempt', KB),
];

/** What the prompt of a turn becomes when it carried a message of the erased customer. */
export const ERASED_PROMPT = '[erased: this prompt held a message from a customer who has since been erased]';

/** Key columns for batching (keyset pagination) and for deleting rows. */
const KEYS: Record<string, string[]> = {
  ThreadParticipant: ['threadId', 'address'],
  ThreadKey: ['mailboxId', 'messageId'],
  LoopState: ['scope'],
};
const keyOf = (table: string) => KEYS[table] ?? ['id'];
const BATCH = 200;
const RAW_BATCH = 20;

/** What the database knows about the customer, read inside the erasure's transaction. */
export interface ErasureSubject {
  entityId: string;
  kind: string;
  key: string;
  /** Entity name, display names of its addresses, names its own mail used. */
  names: string[];
  addresses: string[];
  threadIds: string[];
  draftIds: string[];
}

/** What the caller brings once it knows the subject: the search and the redaction rules. */
export interface ErasureRules {
  /** Candidate search for text columns, and for raw mail (see `searchPlan`). */
  search: { text: Anchor[][]; raw: Anchor[][]; base64: string[] };
  redactText(value: string): { value: string; changed: boolean; strong: boolean };
  redactOriginal(raw: Buffer, mentioned: boolean, source: ErasedOriginalSource): Promise<RawOutcome>;
}

/** Counts of what changed; never the erased values. */
export interface DatabaseErasure {
  subject: ErasureSubject;
  /** Rows deleted, per table. */
  deleted: Record<string, number>;
  /** Rows whose column was redacted in place, per `Table.column`. */
  redacted: Record<string, number>;
  /** Values replaced whole: `Turn.prompt` (carried the customer's mail), `MessageRaw.raw` (re-rendered). */
  replaced: Record<string, number>;
  /** Binary MIME parts emptied inside originals. */
  partsEmptied: number;
}

type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];
type Row = Record<string, unknown>;

/** Erases the entity in one transaction; `rules` is called once the subject is read, and returned. */
export async function eraseEntity<R extends ErasureRules>(
  db: Db,
  entityId: string,
  rules: (subject: ErasureSubject) => R,
  /** Called after each of the four steps (`erase` draws its progress with it). */
  progress?: (done: number, total: number) => void,
): Promise<DatabaseErasure & { rules: R }> {
  return db.$transaction(
    async (tx) => {
      const subject = await readSubject(tx, entityId);
      progress?.(1, 4);
      const result: DatabaseErasure = { subject, deleted: {}, redacted: {}, replaced: {}, partsEmptied: 0 };
      await deleteOwned(tx, subject, result);
      progress?.(2, 4);
      const chosen = rules(subject);
      const mentioned = await redactColumns(tx, chosen, result);
      progress?.(3, 4);
      await redactOriginals(tx, chosen, mentioned, result);
      progress?.(4, 4);
      return { ...result, rules: chosen };
    },
    // An erasure scans every text column once; on a large mailbox that takes longer than Prisma's
    // five-second default for interactive transactions.
    { maxWait: 30_000, timeout: 30 * 60_000 },
  );
}

async function readSubject(tx: Tx, entityId: string): Promise<ErasureSubject> {
  const [entity] = await tx.$queryRawUnsafe<Row[]>('SELECT "id", "kind", "key", "name" FROM "Entity" WHERE "id" = $1 FOR UPDATE', entityId);
  if (!entity) throw new AppError('NOT_FOUND', `no customer ${entityId} (it may have been erased already)`);
  await tx.$executeRawUnsafe('CREATE TEMP TABLE "_erase_addresses" ("address" text PRIMARY KEY) ON COMMIT DROP');
  await tx.$executeRawUnsafe('CREATE TEMP TABLE "_erase_threads" ("id" text PRIMARY KEY) ON COMMIT DROP');
  await tx.$executeRawUnsafe('CREATE TEMP TABLE "_erase_drafts" ("id" text PRIMARY KEY, "messageId" text) ON COMMIT DROP');
  await tx.$executeRawUnsafe(
    'CREATE TEMP TABLE "_erase_messages" ("id" text PRIMARY KEY, "messageId" text, "turnId" text, "threadId" text) ON COMMIT DROP',
  );
  await tx.$executeRawUnsafe(
    'INSERT INTO "_erase_addresses" SELECT DISTINCT lower("address") FROM "EntityAddress" WHERE "entityId" = $1',
    entityId,
  );
  await tx.$executeRawUnsafe('INSERT INTO "_erase_threads" SELECT "id" FROM "Thread" WHERE "entityId" = $1', entityId);
  await tx.$executeRawUnsafe(
    `INSERT INTO "_erase_drafts" SELECT "id", "messageId" FROM "Draft"
     WHERE "threadId" IN (SELECT "id" FROM "_erase_threads") OR lower("toAddress") IN (SELECT "address" FROM "_erase_addresses")`,
  );
  // Its own mail anywhere, everything in its threads, and our replies to it.
  await tx.$executeRawUnsafe(
    `INSERT INTO "_erase_messages" SELECT m."id", m."messageId", m."turnId", m."threadId" FROM "Message" m
     WHERE m."entityId" = $1
        OR lower(m."fromAddress") IN (SELECT "address" FROM "_erase_addresses")
        OR m."threadId" IN (SELECT "id" FROM "_erase_threads")
        OR m."messageId" IN (SELECT "messageId" FROM "_erase_drafts")
        OR (m."direction" = 'outbound' AND EXISTS (
              SELECT 1 FROM jsonb_array_elements_text(m."toAddresses") a(v)
              WHERE lower(a.v) IN (SELECT "address" FROM "_erase_addresses")))`,
    entityId,
  );
  const column = async (sql: string, name: string) => (await tx.$queryRawUnsafe<Row[]>(sql)).map((r) => String(r[name]));
  const addresses = await column('SELECT "address" FROM "_erase_addresses" ORDER BY 1', 'address');
  const names = await tx.$queryRawUnsafe<Row[]>(
    `SELECT "displayName" AS n FROM "EntityAddress" WHERE "entityId" = $1 AND "displayName" IS NOT NULL
     UNION SELECT n FROM (SELECT DISTINCT m."fromName" AS n FROM "Message" m JOIN "_erase_messages" e ON e."id" = m."id"
       WHERE m."fromName" IS NOT NULL AND lower(m."fromAddress") IN (SELECT "address" FROM "_erase_addresses") LIMIT 40) own`,
    entityId,
  );
  const threadIds = await column('SELECT "id" FROM "_erase_threads" ORDER BY 1', 'id');
  const draftIds = await column('SELECT "id" FROM "_erase_drafts" ORDER BY 1', 'id');
  return {
    entityId,
    kind: String(entity['kind']),
    key: String(entity['key']),
    names: [...new Set([entity['name'], ...names.map((r) => r['n'])].filter((n): n is string => typeof n === 'string' && n.length > 0))],
    addresses,
    threadIds,
    draftIds,
  };
}

async function deleteOwned(tx: Tx, subject: ErasureSubject, result: DatabaseErasure): Promise<void> {
  const threads = 'SELECT "id" FROM "_erase_threads"';
  const prompts = await tx.$executeRawUnsafe(
    `UPDATE "Turn" SET "prompt" = $1
     WHERE "id" IN (SELECT "turnId" FROM "_erase_messages" WHERE "turnId" IS NOT NULL)
       AND "threadId" NOT IN (${threads}) AND "prompt" IS DISTINCT FROM $1`,
    ERASED_PROMPT,
  );
  count(result.replaced, 'Turn.prompt', prompts);
  const steps: Array<[string, string, unknown[]]> = [
    [
      'PromotionDecision',
      `"entityId" = $1 OR "runId" IN (SELECT "id" FROM "PromotionRun" WHERE "threadId" IN (${threads}))`,
      [subject.entityId],
    ],
    ['ProfileFact', '"entityId" = $1', [subject.entityId]],
    ['Commitment', `"entityId" = $1 OR "threadId" IN (${threads})`, [subject.entityId]],
    ['PromotionRun', `"threadId" IN (${threads})`, []],
    ['Draft', '"id" IN (SELECT "id" FROM "_erase_drafts")', []],
    ['MessageRaw', '"messageId" IN (SELECT "id" FROM "_erase_messages")', []],
    ['Message', '"id" IN (SELECT "id" FROM "_erase_messages")', []],
    ['Turn', `"threadId" IN (${threads})`, []],
    [
      'ThreadKey',
      `"threadId" IN (${threads})
       OR "messageId" IN (SELECT "messageId" FROM "_erase_messages" UNION SELECT "messageId" FROM "_erase_drafts")`,
      [],
    ],
    [
      'ThreadParticipant',
      `"threadId" IN (${threads}) OR "entityId" = $1 OR lower("address") IN (SELECT "address" FROM "_erase_addresses")`,
      [subject.entityId],
    ],
    ['LlmCall', `"threadId" IN (${threads})`, []],
    // The loop guard's counters: her threads, her addresses (plus-tags folded), her company domain.
    [
      'LoopState',
      `split_part("scope", '|thread:', 2) IN (${threads})
       OR lower(split_part("scope", '|address:', 2)) IN (SELECT "address" FROM "_erase_addresses")
       OR ($1::text = 'domain' AND split_part("scope", '|domain:', 2) = $2::text)`,
      [subject.kind, subject.key],
    ],
  ];
  for (const [table, where, params] of steps) {
    count(result.deleted, table, await tx.$executeRawUnsafe(`DELETE FROM "${table}" WHERE ${where}`, ...params));
  }
  const unlinked = await tx.$executeRawUnsafe(
    `UPDATE "Thread" SET "linkedThreadId" = NULL WHERE "linkedThreadId" IN (${threads}) AND "id" NOT IN (${threads})`,
  );
  count(result.redacted, 'Thread.linkedThreadId', unlinked);
  count(result.deleted, 'Thread', await tx.$executeRawUnsafe(`DELETE FROM "Thread" WHERE "id" IN (${threads})`));
  count(result.deleted, 'EntityAddress', await tx.$executeRawUnsafe('DELETE FROM "EntityAddress" WHERE "entityId" = $1', subject.entityId));
  count(result.deleted, 'Entity', await tx.$executeRawUnsafe('DELETE FROM "Entity" WHERE "id" = $1', subject.entityId));
}

/**
 * Step 2. Returns the ids of messages whose columns mentioned the customer, so their originals
 * are rewritten even when the raw bytes hide every mention inside an encoding.
 */
async function redactColumns(tx: Tx, rules: ErasureRules, result: DatabaseErasure): Promise<Set<string>> {
  const mentioned = new Set<string>();
  if (rules.search.text.length === 0) return mentioned;
  const tables = new Map<string, ErasureColumn[]>();
  for (const c of ERASURE_COLUMNS) {
    if (c.treatment === 'text' || c.treatment === 'json' || c.treatment === 'delete-row') {
      tables.set(c.table, [...(tables.get(c.table) ?? []), c]);
    }
  }
  for (const [table, columns] of tables) {
    const keys = keyOf(table);
    const params = new Params();
    const condition = columns
      .map((c) => anchorCondition(c.treatment === 'json' ? `t."${c.column}"::text` : `t."${c.column}"`, rules.search.text, params))
      .join(' OR ');
    const keyList = keys.map((k) => `t."${k}"`).join(', ');
    const selected = [
      keyList,
      ...columns
        .filter((c) => !keys.includes(c.column))
        .map((c) => (c.treatment === 'json' ? `t."${c.column}"::text AS "${c.column}"` : `t."${c.column}"`)),
    ];
    let after: unknown[] | null = null;
    for (;;) {
      const keyParams: unknown[] = after ?? [];
      const offset = params.values.length;
      const keyset: string = after ? `(${keyList}) > (${keys.map((_k, i) => `$${offset + i + 1}`).join(', ')}) AND ` : '';
      const rows: Row[] = await tx.$queryRawUnsafe<Row[]>(
        `SELECT ${selected.join(', ')} FROM "${table}" t WHERE ${keyset}(${condition}) ORDER BY ${keyList} LIMIT ${BATCH}`,
        ...params.values,
        ...keyParams,
      );
      if (rows.length === 0) break;
      after = keys.map((k) => rows[rows.length - 1]?.[k]);
      const updates: Row[] = [];
      const doomed: Row[] = [];
      for (const row of rows) {
        const update: Row = {};
        let strong = false;
        for (const c of columns) {
          const value = row[c.column];
          if (typeof value !== 'string') continue;
          const redaction = c.treatment === 'json' ? redactJsonText(value, rules) : rules.redactText(value);
          strong ||= redaction.strong;
          if (c.treatment === 'delete-row') {
            if (redaction.strong) doomed.push(Object.fromEntries(keys.map((k) => [k, row[k]])));
          } else if (redaction.changed) {
            update[c.column] = c.treatment === 'json' ? (JSON.parse(redaction.value) as unknown) : redaction.value;
            count(result.redacted, `${table}.${c.column}`, 1);
          }
        }
        if (table === 'Message' && strong) mentioned.add(String(row['id']));
        if (Object.keys(update).length > 0) updates.push({ ...Object.fromEntries(keys.map((k) => [k, row[k]])), ...update });
      }
      if (updates.length > 0) await writeBack(tx, table, keys, columns, updates);
      if (doomed.length > 0) count(result.deleted, table, await deleteByKey(tx, table, keys, doomed));
      if (rows.length < BATCH) break;
    }
  }
  return mentioned;
}

/** A JSON column is one value; the needles hold no quote or backslash, so the text stays JSON. */
function redactJsonText(text: string, rules: ErasureRules): { value: string; changed: boolean; strong: boolean } {
  const redaction = rules.redactText(text);
  if (!redaction.changed) return redaction;
  try {
    JSON.parse(redaction.value);
    return redaction;
  } catch {
    // Defensive: redact string by string if a replacement ever broke the JSON text.
    let strong = false;
    const walk = (value: unknown): unknown => {
      if (typeof value === 'string') {
        const r = rules.redactText(value);
        strong ||= r.strong;
        return r.value;
      }
      if (Array.isArray(value)) return value.map(walk);
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
      return value;
    };
    const value = JSON.stringify(walk(JSON.parse(text)));
    return { value, changed: value !== text, strong };
  }
}

async function writeBack(tx: Tx, table: string, keys: string[], columns: ErasureColumn[], updates: Row[]): Promise<void> {
  const editable = columns.filter((c) => c.treatment === 'text' || c.treatment === 'json');
  const types = [...keys.map((k) => `"${k}" text`), ...editable.map((c) => `"${c.column}" ${c.treatment === 'json' ? 'jsonb' : 'text'}`)];
  const sets = editable.map((c) => `"${c.column}" = COALESCE(x."${c.column}", t."${c.column}")`);
  await tx.$executeRawUnsafe(
    `UPDATE "${table}" t SET ${sets.join(', ')} FROM jsonb_to_recordset($1::jsonb) AS x(${types.join(', ')})
     WHERE ${keys.map((k) => `t."${k}" = x."${k}"`).join(' AND ')}`,
    JSON.stringify(updates),
  );
}

async function deleteByKey(tx: Tx, table: string, keys: string[], rows: Row[]): Promise<number> {
  return tx.$executeRawUnsafe(
    `DELETE FROM "${table}" t USING jsonb_to_recordset($1::jsonb) AS x(${keys.map((k) => `"${k}" text`).join(', ')})
     WHERE ${keys.map((k) => `t."${k}" = x."${k}"`).join(' AND ')}`,
    JSON.stringify(rows),
  );
}

/** Query parameters, each distinct value bound once however often the query uses it. */
class Params {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();

  ref(value: string): string {
    let i = this.index.get(value);
    if (i === undefined) {
      this.values.push(value);
      i = this.values.length;
      this.index.set(value, i);
    }
    return `$${i}`;
  }
}

/** OR over needles, AND over each needle's anchors. */
function anchorCondition(expression: string, needles: Anchor[][], params: Params, folded = `lower(${expression})`): string {
  const param = (value: string) => params.ref(value);
  return needles
    .map((anchors) =>
      anchors
        .map((a) =>
          'folded' in a
            ? `strpos(${folded}, ${param(a.folded)}) > 0`
            : `(${a.exact.map((v) => `strpos(${expression}, ${param(v)}) > 0`).join(' OR ')})`,
        )
        .join(' AND '),
    )
    .map((clause) => `(${clause})`)
    .join(' OR ');
}

/** Step 3. */
async function redactOriginals(tx: Tx, rules: ErasureRules, mentioned: Set<string>, result: DatabaseErasure): Promise<void> {
  const candidates = new Set(mentioned);
  if (rules.search.raw.length > 0 || rules.search.base64.length > 0) {
    const params = new Params();
    const conditions = [
      ...(rules.search.raw.length > 0 ? [anchorCondition('x.e', rules.search.raw, params, 'x.le')] : []),
      ...rules.search.base64.map((form) => `strpos(x.e, ${params.ref(form)}) > 0`),
    ];
    // OFFSET 0 keeps PostgreSQL from inlining the subquery, so each original is encoded once.
    const rows = await tx.$queryRawUnsafe<Row[]>(
      `SELECT r."messageId" FROM "MessageRaw" r,
         LATERAL (SELECT e, lower(e) AS le FROM (SELECT encode(r."raw", 'escape') AS e OFFSET 0) y OFFSET 0) x
       WHERE ${conditions.join(' OR ')}`,
      ...params.values,
    );
    for (const row of rows) candidates.add(String(row['messageId']));
  }
  const ids = [...candidates].sort();
  for (let i = 0; i < ids.length; i += RAW_BATCH) {
    const originals = await tx.messageRaw.findMany({
      where: { messageId: { in: ids.slice(i, i + RAW_BATCH) } },
      select: {
        messageId: true,
        raw: true,
        message: {
          select: {
            messageId: true,
            fromAddress: true,
            fromName: true,
            toAddresses: true,
            ccAddresses: true,
            subject: true,
            sentAt: true,
            inReplyTo: true,
            references: true,
            bodyText: true,
          },
        },
      },
    });
    for (const original of originals) {
      const m = original.message;
      const outcome = await rules.redactOriginal(Buffer.from(original.raw), mentioned.has(original.messageId), {
        messageId: m.messageId,
        fromAddress: m.fromAddress,
        fromName: m.fromName,
        to: strings(m.toAddresses),
        cc: strings(m.ccAddresses),
        subject: m.subject,
        date: m.sentAt,
        inReplyTo: m.inReplyTo,
        references: strings(m.references),
        bodyText: m.bodyText,
      });
      if (outcome.kind === 'unchanged') continue;
      await tx.messageRaw.update({ where: { messageId: original.messageId }, data: { raw: new Uint8Array(outcome.raw) } });
      if (outcome.kind === 'redacted') {
        count(result.redacted, 'MessageRaw.raw', 1);
        result.partsEmptied += outcome.partsEmptied;
      } else count(result.replaced, 'MessageRaw.raw', 1);
    }
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function count(into: Record<string, number>, key: string, n: number): void {
  if (n > 0) into[key] = (into[key] ?? 0) + n;
}
