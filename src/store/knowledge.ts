/**
 * The knowledge base's tables (KbDocument, KbPassage) and its lexical search. Search is
 * PostgreSQL's own full-text search, the same on PGlite and PostgreSQL: each passage is read with
 * its document language's stemming configuration (`simple` when the language has none or is not
 * known) and with `simple`, into a stored vector with a GIN index; a question is an OR of its
 * terms (src/memory/knowledge.ts), ranked by `ts_rank` normalised by length.
 */
import { createHash } from 'node:crypto';
import { newId } from '../ids.ts';
import type { KbFormat, KbPassageDraft, KnowledgePassage } from '../memory/knowledge.ts';
import type { DbClient } from './client.ts';
import { jsonStringArray } from './client.ts';
import type { Db } from './database.ts';
import { utcTimestamp, type SqlExecutor } from './sql.ts';

export interface KbDocumentRecord {
  id: string;
  source: string;
  title: string;
  format: string;
  lang: string | null;
  tags: string[];
  contentHash: string;
  bytes: number;
  passages: number;
  updatedAt: Date;
}

export interface KbDocumentInput {
  source: string;
  title: string;
  format: KbFormat;
  lang: string | null;
  tags: string[];
  contentHash: string;
  bytes: number;
  passages: KbPassageDraft[];
}

/** What storing a document did: `unchanged` when a document with the same source and hash was there. */
export type KbStoreOutcome = { kind: 'created' | 'updated' | 'unchanged'; id: string };

/** Stores a document and its passages; a changed document's passages are replaced (new ids). */
export async function storeKbDocument(db: Db, input: KbDocumentInput, now: Date): Promise<KbStoreOutcome> {
  const existing = await db.kbDocument.findUnique({ where: { source: input.source } });
  const meta = {
    title: input.title,
    format: input.format,
    lang: input.lang,
    tags: input.tags,
    contentHash: input.contentHash,
    bytes: input.bytes,
  };
  if (existing && existing.contentHash === input.contentHash && existing.lang === input.lang && sameTags(existing.tags, input.tags))
    return { kind: 'unchanged', id: existing.id };
  const id = existing?.id ?? newId('kb');
  await db.$transaction(async (tx) => {
    if (existing) {
      // The old passages step aside (negative ordinals) until the new ones have taken over the
      // vectors of passages whose embedded input did not change; then they go.
      await tx.$executeRawUnsafe(`UPDATE "KbPassage" SET "ordinal" = -1 - "ordinal" WHERE "documentId" = $1`, id);
      await tx.kbDocument.update({ where: { id }, data: { ...meta, updatedAt: now } });
    } else {
      await tx.kbDocument.create({ data: { id, source: input.source, ...meta, createdAt: now, updatedAt: now } });
    }
    await tx.kbPassage.createMany({
      data: input.passages.map((p) => ({
        id: newId('kp'),
        documentId: id,
        ordinal: p.ordinal,
        titlePath: p.titlePath,
        text: p.text,
        searchText: p.searchText,
        tokens: p.tokens,
        inputHash: embeddingInputHash(p),
      })),
    });
    if (existing) {
      await tx.$executeRawUnsafe(CARRY_VECTORS_SQL, id, now);
      await tx.$executeRawUnsafe(`DELETE FROM "KbPassage" WHERE "documentId" = $1 AND "ordinal" < 0`, id);
    }
    await tx.$executeRawUnsafe(SET_VECTORS_SQL, id);
  });
  return { kind: existing ? 'updated' : 'created', id };
}

/** What an embedding of a passage reads: its heading path, then its text. */
export function embeddingInput(p: { titlePath: string; text: string }): string {
  return `${p.titlePath}\n${p.text}`;
}

function embeddingInputHash(p: { titlePath: string; text: string }): string {
  return createHash('sha256').update(embeddingInput(p)).digest('hex');
}

// A new passage takes the vector of an old passage of the same document with the same input
// (the same text under the same headings), so re-importing an edited document embeds only what
// changed. The stamp is renewed so the in-process vector index sees the document changed.
const CARRY_VECTORS_SQL = `
  UPDATE "KbPassage" n SET "embedding" = o."embedding", "embeddingModel" = o."embeddingModel", "embeddedAt" = $2
  FROM "KbPassage" o
  WHERE n."documentId" = $1 AND n."ordinal" >= 0 AND o."documentId" = $1 AND o."ordinal" < 0
    AND o."inputHash" = n."inputHash" AND o."embedding" IS NOT NULL`;

function sameTags(stored: unknown, tags: readonly string[]): boolean {
  const a = jsonStringArray(stored);
  return a.length === tags.length && a.every((t, i) => t === tags[i]);
}

export async function listKbDocuments(db: DbClient): Promise<KbDocumentRecord[]> {
  const rows = await db.kbDocument.findMany({ orderBy: { source: 'asc' }, include: { _count: { select: { passages: true } } } });
  return rows.map((r) => ({
    id: r.id,
    source: r.source,
    title: r.title,
    format: r.format,
    lang: r.lang,
    tags: jsonStringArray(r.tags),
    contentHash: r.contentHash,
    bytes: r.bytes,
    passages: r._count.passages,
    updatedAt: r.updatedAt,
  }));
}

/** A document by id or source, with its passages in order. */
export async function loadKbDocument(
  db: DbClient,
  ref: string,
): Promise<
  (KbDocumentRecord & { passageList: Array<{ id: string; ordinal: number; titlePath: string; text: string; tokens: number }> }) | null
> {
  const doc = await db.kbDocument.findFirst({
    where: { OR: [{ id: ref }, { source: ref }] },
    include: { passages: { orderBy: { ordinal: 'asc' } } },
  });
  if (!doc) return null;
  return {
    id: doc.id,
    source: doc.source,
    title: doc.title,
    format: doc.format,
    lang: doc.lang,
    tags: jsonStringArray(doc.tags),
    contentHash: doc.contentHash,
    bytes: doc.bytes,
    passages: doc.passages.length,
    updatedAt: doc.updatedAt,
    passageList: doc.passages.map((p) => ({ id: p.id, ordinal: p.ordinal, titlePath: p.titlePath, text: p.text, tokens: p.tokens })),
  };
}

/** Removes documents (by id or source) with their passages; how many went. */
export async function removeKbDocuments(db: DbClient, refs: readonly string[]): Promise<number> {
  if (refs.length === 0) return 0;
  const { count } = await db.kbDocument.deleteMany({ where: { OR: [{ id: { in: [...refs] } }, { source: { in: [...refs] } }] } });
  return count;
}

// The stemming configuration for a language; `simple` (no stemming, no stopwords) otherwise.
const CONFIGS: Record<string, string> = {
  en: 'english',
  de: 'german',
  fr: 'french',
  es: 'spanish',
  nl: 'dutch',
  it: 'italian',
  pt: 'portuguese',
  sv: 'swedish',
  da: 'danish',
  fi: 'finnish',
  no: 'norwegian',
  ru: 'russian',
};
const TS_CONFIG_OF_LANG = `CASE d."lang" ${Object.entries(CONFIGS)
  .map(([lang, config]) => `WHEN '${lang}' THEN '${config}'`)
  .join(' ')} ELSE 'simple' END::regconfig`;

// Each passage's vector holds its words stemmed by its document's language and as they are
// (`simple`): stemming finds "exporting" for "export", `simple` the words a stemmer drops.
const SET_VECTORS_SQL = `
  UPDATE "KbPassage" p SET "searchVector" = to_tsvector(${TS_CONFIG_OF_LANG}, p."searchText") || to_tsvector('simple', p."searchText")
  FROM "KbDocument" d WHERE d."id" = p."documentId" AND d."id" = $1`;

/** Stemming configurations a query is read with besides `simple`: at most this many languages. */
const QUERY_CONFIGS = 6;

// The question is read with `simple` and with the configurations of the knowledge base's
// languages (padded with `simple`), so one statement text serves every knowledge base. The GIN
// index on the vectors finds the candidates.
const SEARCH_SQL = `
  WITH q AS (
    SELECT to_tsquery('simple', $1) || to_tsquery($2::regconfig, $1) || to_tsquery($3::regconfig, $1) || to_tsquery($4::regconfig, $1)
      || to_tsquery($5::regconfig, $1) || to_tsquery($6::regconfig, $1) || to_tsquery($7::regconfig, $1) AS query
  )
  SELECT p."id", p."titlePath", p."text", d."title", ts_rank(p."searchVector", q.query, 1)::float8 AS "score"
  FROM q, "KbPassage" p JOIN "KbDocument" d ON d."id" = p."documentId"
  WHERE p."searchVector" @@ q.query
  ORDER BY "score" DESC, p."id"
  LIMIT $8`;

const LANGS_SQL = `SELECT DISTINCT "lang" FROM "KbDocument" WHERE "lang" IS NOT NULL`;

/**
 * The passages best matching `terms` (already folded words, see `kbQueryTerms`), best first.
 * Terms are joined as an OR query; only letters and digits reach `to_tsquery`.
 */
export async function searchKbPassages(sql: SqlExecutor, terms: readonly string[], limit: number): Promise<KnowledgePassage[]> {
  const safe = terms.map((t) => t.replace(/[^\p{L}\p{N}]/gu, '')).filter((t) => t.length > 0);
  if (safe.length === 0 || limit <= 0) return [];
  const langs = (await sql.query(LANGS_SQL)).map((r) => String(r['lang']));
  const configs = [...new Set(langs.map((lang) => CONFIGS[lang]).filter((c): c is string => c !== undefined))]
    .sort()
    .slice(0, QUERY_CONFIGS);
  while (configs.length < QUERY_CONFIGS) configs.push('simple');
  const rows = await sql.query(SEARCH_SQL, [safe.join(' | '), ...configs, limit]);
  return rows.map((r) => ({
    id: String(r['id']),
    title: String(r['title']),
    titlePath: String(r['titlePath']),
    text: String(r['text']),
    score: Number(r['score']),
  }));
}

// --- embeddings ---

/** Passages without a vector of `model` (never embedded, or by another model), a batch at a time. */
export async function kbPassagesToEmbed(
  sql: SqlExecutor,
  model: string,
  limit: number,
  after = '',
): Promise<Array<{ id: string; input: string }>> {
  const rows = await sql.query(
    `SELECT "id", "titlePath", "text" FROM "KbPassage"
     WHERE ("embedding" IS NULL OR "embeddingModel" IS DISTINCT FROM $1) AND "id" > $2 AND "ordinal" >= 0
     ORDER BY "id" LIMIT $3`,
    [model, after, limit],
  );
  return rows.map((r) => ({ id: String(r['id']), input: embeddingInput({ titlePath: String(r['titlePath']), text: String(r['text']) }) }));
}

/** Stores vectors (as `real[]`) with the model that made them. */
export async function setKbEmbeddings(
  sql: SqlExecutor,
  model: string,
  vectors: ReadonlyArray<{ id: string; vector: readonly number[] }>,
  now: Date,
): Promise<void> {
  if (vectors.length === 0) return;
  await sql.query(
    `UPDATE "KbPassage" p SET "embedding" = x."v", "embeddingModel" = $2, "embeddedAt" = $3::timestamp
     FROM (SELECT e->>'id' AS "id", ARRAY(SELECT jsonb_array_elements_text(e->'v')::real) AS "v" FROM jsonb_array_elements($1::jsonb) e) x
     WHERE p."id" = x."id"`,
    [JSON.stringify(vectors.map((v) => ({ id: v.id, v: v.vector }))), model, utcTimestamp(now)],
  );
}

/** How many passages have a vector of `model`, and how many have none (or another model's). */
export async function kbEmbeddingCounts(sql: SqlExecutor, model: string): Promise<{ embedded: number; pending: number }> {
  const [row] = await sql.query(
    `SELECT count(*) FILTER (WHERE "embeddingModel" = $1 AND "embedding" IS NOT NULL)::int AS "embedded",
            count(*) FILTER (WHERE "embedding" IS NULL OR "embeddingModel" IS DISTINCT FROM $1)::int AS "pending"
     FROM "KbPassage"`,
    [model],
  );
  return { embedded: Number(row?.['embedded'] ?? 0), pending: Number(row?.['pending'] ?? 0) };
}

/**
 * What identifies the current set of `model` vectors: their number and latest stamp. Any import,
 * re-embedding or removal changes it, so an in-process copy knows when to reload.
 */
export async function kbVectorsVersion(sql: SqlExecutor, model: string): Promise<string> {
  const [row] = await sql.query(
    `SELECT count(*)::int AS "n", max("embeddedAt")::text AS "at" FROM "KbPassage" WHERE "embeddingModel" = $1 AND "embedding" IS NOT NULL`,
    [model],
  );
  return `${String(row?.['n'] ?? 0)}@${String(row?.['at'] ?? '')}`;
}

/** The ids of the passages with a vector of `model`. */
export async function kbVectorIds(sql: SqlExecutor, model: string): Promise<string[]> {
  const rows = await sql.query(`SELECT "id" FROM "KbPassage" WHERE "embeddingModel" = $1 AND "embedding" IS NOT NULL`, [model]);
  return rows.map((r) => String(r['id']));
}

/**
 * The vectors of these passages (those still embedded by `model`) as 32-bit floats. Read as the
 * array's text and parsed here: PGlite decodes a binary (`array_send`) or `real[]` result several
 * times slower than it prints the text.
 */
export async function loadKbVectors(
  sql: SqlExecutor,
  model: string,
  ids: readonly string[],
): Promise<Array<{ id: string; vector: Float32Array }>> {
  const out: Array<{ id: string; vector: Float32Array }> = [];
  for (let start = 0; start < ids.length; start += 5_000) {
    const rows = await sql.query(
      `SELECT "id", "embedding"::text AS "v" FROM "KbPassage"
       WHERE "embeddingModel" = $1 AND "embedding" IS NOT NULL AND "id" IN (SELECT jsonb_array_elements_text($2::jsonb))`,
      [model, JSON.stringify(ids.slice(start, start + 5_000))],
    );
    for (const r of rows) {
      const vector = realArrayFromText(r['v']);
      if (vector) out.push({ id: String(r['id']), vector });
    }
  }
  return out;
}

/** A one-dimensional `real[]` as PostgreSQL prints it (`{0.1,-2e-05,…}`); null if anything is not a finite number. */
function realArrayFromText(value: unknown): Float32Array | null {
  if (typeof value !== 'string' || !value.startsWith('{') || !value.endsWith('}')) return null;
  const parts = value.slice(1, -1).split(',');
  const out = new Float32Array(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const n = Number(parts[i]);
    if (!Number.isFinite(n)) return null;
    out[i] = n;
  }
  return out;
}

/** Passages by id (those that still exist), for results found by meaning alone. */
export async function loadKbPassages(sql: SqlExecutor, ids: readonly string[]): Promise<KnowledgePassage[]> {
  if (ids.length === 0) return [];
  const rows = await sql.query(
    `SELECT p."id", p."titlePath", p."text", d."title" FROM "KbPassage" p JOIN "KbDocument" d ON d."id" = p."documentId"
     WHERE p."id" IN (SELECT jsonb_array_elements_text($1::jsonb))`,
    [JSON.stringify(ids)],
  );
  return rows.map((r) => ({
    id: String(r['id']),
    title: String(r['title']),
    titlePath: String(r['titlePath']),
    text: String(r['text']),
    score: 0,
  }));
}

/** The document a passage belongs to, or null when the passage no longer exists. */
export async function kbPassageDocument(sql: SqlExecutor, passageId: string): Promise<string | null> {
  const [row] = await sql.query(`SELECT "documentId" FROM "KbPassage" WHERE "id" = $1`, [passageId]);
  return row ? String(row['documentId']) : null;
}
