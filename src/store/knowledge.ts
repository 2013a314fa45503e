/**
 * The knowledge base's tables (KbDocument, KbPassage) and its lexical search. Search is
 * PostgreSQL's own full-text search, the same on PGlite and PostgreSQL: each passage is read with
 * its document language's stemming configuration (`simple` when the language has none or is not
 * known) and with `simple`, into a stored vector with a GIN index; a question is an OR of its
 * terms (src/memory/knowledge.ts), ranked by `ts_rank` normalised by length.
 */
import { newId } from '../ids.ts';
import type { KbFormat, KbPassageDraft, KnowledgePassage } from '../memory/knowledge.ts';
import type { DbClient } from './client.ts';
import { jsonStringArray } from './client.ts';
import type { Db } from './database.ts';
import type { SqlExecutor } from './sql.ts';

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
      await tx.kbPassage.deleteMany({ where: { documentId: id } });
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
      })),
    });
    await tx.$executeRawUnsafe(SET_VECTORS_SQL, id);
  });
  return { kind: existing ? 'updated' : 'created', id };
}

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
