/**
 * The knowledge base's tables (KbDocument, KbPassage) and its lexical search. Search is
 * PostgreSQL's own full-text search, the same on PGlite and PostgreSQL: each passage is read with
 * its document language's stemming configuration (`simple` when the language has none or is not
 * known), and a question is an OR of its terms (src/memory/knowledge.ts), ranked by `ts_rank`
 * normalised by length. No index: the vectors are computed per query, which is fine to tens of
 * thousands of passages (README "Knowledge base").
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

// The stemming configuration for a document's language; `simple` (no stemming, no stopwords) otherwise.
const TS_CONFIG = `CASE d."lang" WHEN 'en' THEN 'english' WHEN 'de' THEN 'german' WHEN 'fr' THEN 'french' WHEN 'es' THEN 'spanish'
  WHEN 'nl' THEN 'dutch' WHEN 'it' THEN 'italian' WHEN 'pt' THEN 'portuguese' WHEN 'sv' THEN 'swedish' WHEN 'da' THEN 'danish'
  WHEN 'fi' THEN 'finnish' WHEN 'no' THEN 'norwegian' WHEN 'ru' THEN 'russian' ELSE 'simple' END::regconfig`;

// A passage matches when either its language's configuration or `simple` finds a term: stemming
// catches "exporting" for "export", `simple` catches words the stemmer would drop as stopwords.
const SEARCH_SQL = `
  WITH q AS (SELECT $1::text AS terms)
  SELECT p."id", p."titlePath", p."text", d."title",
         greatest(
           ts_rank(to_tsvector(${TS_CONFIG}, p."searchText"), to_tsquery(${TS_CONFIG}, q.terms), 1),
           ts_rank(to_tsvector('simple', p."searchText"), to_tsquery('simple', q.terms), 1)
         )::float8 AS "score"
  FROM "KbPassage" p JOIN "KbDocument" d ON d."id" = p."documentId", q
  WHERE to_tsvector(${TS_CONFIG}, p."searchText") @@ to_tsquery(${TS_CONFIG}, q.terms)
     OR to_tsvector('simple', p."searchText") @@ to_tsquery('simple', q.terms)
  ORDER BY "score" DESC, p."id"
  LIMIT $2`;

/**
 * The passages best matching `terms` (already folded words, see `kbQueryTerms`), best first.
 * Terms are joined as an OR query; only letters and digits reach `to_tsquery`.
 */
export async function searchKbPassages(sql: SqlExecutor, terms: readonly string[], limit: number): Promise<KnowledgePassage[]> {
  const safe = terms.map((t) => t.replace(/[^\p{L}\p{N}]/gu, '')).filter((t) => t.length > 0);
  if (safe.length === 0 || limit <= 0) return [];
  const rows = await sql.query(SEARCH_SQL, [safe.join(' | '), limit]);
  return rows.map((r) => ({
    id: String(r['id']),
    title: String(r['title']),
    titlePath: String(r['titlePath']),
    text: String(r['text']),
    score: Number(r['score']),
  }));
}
