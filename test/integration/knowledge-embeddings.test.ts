/**
 * Knowledge embeddings through the real `openai` client against the scripted server's
 * deterministic `/v1/embeddings`, on PGlite and PostgreSQL: vectors at import (batched, inputs
 * capped), re-import embeds only what changed, a model change re-embeds, questions are embedded
 * and the rankings fused; a failing endpoint leaves the lexical ranking (and an import that still
 * succeeds). Reports recall@5 lexical and fused on the labelled and the paraphrased questions.
 */
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKnowledge, type KbImportOptions } from '../../src/app/import-knowledge.ts';
import { InProcessVectorIndex, KnowledgeSearch } from '../../src/app/knowledge-search.ts';
import { OpenAiEmbedder } from '../../src/llm/embeddings.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { countTokens } from '../../src/memory/tokens.ts';
import { type Database } from '../../src/store/database.ts';
import { kbEmbeddingCounts, loadKbDocument } from '../../src/store/knowledge.ts';
import { KNOWLEDGE_DOCS, knowledgeRecall, paraphrasedQuestions } from '../support/knowledge-questions.ts';
import { createMigratedDatabase } from '../support/postgres.ts';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { openMigratedMemoryDatabase } from '../support/pglite.ts';

const backends: Array<{ name: string; open: () => Promise<{ database: Database; close: () => Promise<void> }> }> = [
  {
    name: 'PostgreSQL',
    open: async () => {
      const { database, cleanup } = await createMigratedDatabase();
      return { database, close: cleanup };
    },
  },
  {
    name: 'PGlite',
    open: async () => {
      const database = await openMigratedMemoryDatabase();
      return { database, close: () => database.close() };
    },
  },
];

function recordingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return {
    logger: createLogger('test', { level: 'warn', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
    lines,
  };
}

describe.each(backends)('knowledge embeddings on $name', ({ name, open }) => {
  let database: Database;
  let close: () => Promise<void>;
  let server: ScriptedLlmServer;
  let folder: string;
  const embedder = (model: string, extra: { inputTokens?: number; maxRetries?: number; batch?: number } = {}) =>
    new OpenAiEmbedder(
      {
        model,
        apiKey: 'sk-test-embeddings-0001',
        baseUrl: server.url,
        batch: extra.batch ?? 16,
        inputTokens: extra.inputTokens ?? 2000,
        timeoutMs: 5_000,
        maxRetries: extra.maxRetries ?? 1,
      },
      createLogger('embeddings', { level: 'silent' }),
      async () => {},
    );
  const importOptions = (model: string, logger: Logger = createLogger('x', { level: 'silent' })): KbImportOptions => ({
    lang: 'en',
    embeddings: { embedder: embedder(model), batch: 16, logger, sql: database.sql },
  });

  beforeAll(async () => {
    ({ database, close } = await open());
    server = await startScriptedLlmServer();
    folder = await mkdtemp(path.join(tmpdir(), 'kb-embed-'));
    await cp(KNOWLEDGE_DOCS, folder, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await close?.();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('embeds every passage at import, in batches, each input its heading path and text', async () => {
    const report = await importKnowledge(database.prisma, [folder], importOptions('embed-a'));
    expect(report.created).toHaveLength(28);
    expect(report.embeddings).toEqual({ model: 'embed-a', embedded: report.passages, error: null });
    const inputs = server.embeddingRequests.flatMap((r) => r.input);
    expect(inputs).toHaveLength(report.passages);
    expect(server.embeddingRequests.every((r) => r.model === 'embed-a' && r.input.length <= 16)).toBe(true);
    expect(inputs).toContain(
      'Refunds > Refund window\nYou can ask for a refund within 14 days of a payment. Refunds go back to the card or account that paid, and take 5 to 10 business days to appear.',
    );
    expect(await kbEmbeddingCounts(database.sql, 'embed-a')).toEqual({ embedded: report.passages, pending: 0 });
    const [row] = await database.sql.query(
      `SELECT array_length("embedding", 1) AS n, pg_typeof("embedding")::text AS t FROM "KbPassage" LIMIT 1`,
    );
    expect(row).toMatchObject({ n: 256, t: 'real[]' });
  });

  it('re-import: unchanged documents cost no request; an edited one embeds only its new passage', async () => {
    server.reset();
    const unchanged = await importKnowledge(database.prisma, [folder], importOptions('embed-a'));
    expect(unchanged.unchanged).toHaveLength(28);
    expect(unchanged.embeddings?.embedded).toBe(0);
    expect(server.embeddingRequests).toEqual([]);

    const before = await loadKbDocument(database.prisma, 'exports/excel-export.md');
    await appendFile(
      path.join(folder, 'exports/excel-export.md'),
      '\n## Scheduled exports\nSchedule a weekly export under Settings > Exports > Schedule.\n',
    );
    const edited = await importKnowledge(database.prisma, [folder], importOptions('embed-a'));
    expect(edited.updated).toEqual(['exports/excel-export.md']);
    expect(edited.embeddings?.embedded).toBe(1);
    expect(server.embeddingRequests.flatMap((r) => r.input)).toEqual([
      'Exporting reports to Excel and CSV > Scheduled exports\nSchedule a weekly export under Settings > Exports > Schedule.',
    ]);
    const after = await loadKbDocument(database.prisma, 'exports/excel-export.md');
    expect(after!.passages).toBe(before!.passages + 1);
    // New passage ids, the old vectors carried over.
    expect(after!.passageList.map((p) => p.id)).not.toEqual(before!.passageList.map((p) => p.id));
    expect(await kbEmbeddingCounts(database.sql, 'embed-a')).toMatchObject({ pending: 0 });
  });

  it('a model change re-embeds every passage', async () => {
    server.reset();
    const report = await importKnowledge(database.prisma, [folder], importOptions('embed-b'));
    const total = (await kbEmbeddingCounts(database.sql, 'embed-b')).embedded;
    expect(report.embeddings?.embedded).toBe(total);
    expect(await kbEmbeddingCounts(database.sql, 'embed-a')).toEqual({ embedded: 0, pending: total });
    expect(server.embeddingRequests.every((r) => r.model === 'embed-b')).toBe(true);
  });

  it('caps each input to the token cap before sending', async () => {
    server.reset();
    const [vector] = await embedder('embed-b', { inputTokens: 16 }).embed(['word '.repeat(5_000)]);
    expect(vector).toHaveLength(256);
    expect(countTokens(server.embeddingRequests[0]!.input[0]!)).toBeLessThanOrEqual(16);
  });

  it('embeds the question and fuses the rankings: a paraphrase lexical search misses is found by meaning', async () => {
    server.reset();
    const { logger } = recordingLogger();
    const search = new KnowledgeSearch(
      database.sql,
      { embedder: embedder('embed-b'), index: new InProcessVectorIndex(database.sql) },
      logger,
    );
    const result = await search.search('Is there a night theme for the app?', 5);
    expect(result.mode).toBe('fused');
    expect(server.embeddingRequests).toEqual([{ model: 'embed-b', input: ['Is there a night theme for the app?'] }]);
    const dark = result.hits.find((h) => h.titlePath === 'Dark mode and themes > Dark mode');
    expect(dark?.vectorRank).toBe(1);
    expect(dark?.vectorScore).toBeGreaterThan(0);
    // Fused scores are 1/(60 + rank) sums, best first.
    const scores = result.hits.map((h) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const h of result.hits)
      expect(h.score).toBeCloseTo((h.lexicalRank ? 1 / (60 + h.lexicalRank) : 0) + (h.vectorRank ? 1 / (60 + h.vectorRank) : 0), 10);
  });

  it('recall@5: lexical and fused, on the labelled and the paraphrased questions', async () => {
    const { logger } = recordingLogger();
    const search = new KnowledgeSearch(
      database.sql,
      { embedder: embedder('embed-b'), index: new InProcessVectorIndex(database.sql) },
      logger,
    );
    const fused = async (q: string, k: number) => (await search.search(q, k)).hits;
    const lexical5 = await knowledgeRecall(database.sql, 5);
    const fused5 = await knowledgeRecall(database.sql, 5, { search: fused });
    const fused1 = await knowledgeRecall(database.sql, 1, { search: fused });
    const lexical1 = await knowledgeRecall(database.sql, 1);
    const questions = paraphrasedQuestions();
    const paraLexical = await knowledgeRecall(database.sql, 5, { questions });
    const paraFused = await knowledgeRecall(database.sql, 5, { questions, search: fused });
    process.stdout.write(
      `knowledge recall on ${name}: labelled @5 lexical ${lexical5.hits}/${lexical5.answerable}, fused ${fused5.hits}/${fused5.answerable}; ` +
        `@1 lexical ${lexical1.hits}, fused ${fused1.hits}; paraphrased @5 lexical ${paraLexical.hits}/${paraLexical.answerable}, fused ${paraFused.hits}/${paraFused.answerable}; ` +
        `fused misses: ${JSON.stringify([...fused5.misses, ...paraFused.misses])}\n`,
    );
    expect(fused5.recall).toBeGreaterThanOrEqual(0.85);
    expect(paraFused.hits).toBeGreaterThan(paraLexical.hits);
  });

  it('an embeddings endpoint that fails leaves the lexical ranking, with a log line', async () => {
    server.reset();
    const { logger, lines } = recordingLogger();
    const search = new KnowledgeSearch(
      database.sql,
      { embedder: embedder('embed-b', { maxRetries: 1 }), index: new InProcessVectorIndex(database.sql) },
      logger,
    );
    const lexicalOnly = new KnowledgeSearch(database.sql, null, logger);
    server.enqueueEmbeddings({ kind: 'status', status: 503 }, { kind: 'status', status: 503 });
    const result = await search.search('How do I export to Excel?', 5);
    expect(server.embeddingRequests).toHaveLength(2); // one retry, then given up
    expect(result.mode).toBe('lexical');
    expect(result.degraded).toContain('embeddings unavailable after 2 attempt(s)');
    expect(result.hits.map((h) => h.id)).toEqual((await lexicalOnly.search('How do I export to Excel?', 5)).hits.map((h) => h.id));
    expect(lines.map((l) => l['message'])).toContain('knowledge search: embeddings unavailable, lexical ranking only');
    expect(JSON.stringify(lines)).not.toContain('sk-test-embeddings-0001');

    // A 400 is not retried; a malformed answer (a vector missing) is refused, not used.
    server.reset();
    server.enqueueEmbeddings({ kind: 'status', status: 400 });
    expect((await search.search('refund', 3)).mode).toBe('lexical');
    expect(server.embeddingRequests).toHaveLength(1);
    server.enqueueEmbeddings({ kind: 'status', status: 200, body: { object: 'list', data: [{ index: 0, embedding: ['x'] }] } });
    expect((await search.search('refund', 3)).degraded).toContain('unexpected answer');
  });

  it('an import whose embeddings fail still imports; the next import embeds what is missing', async () => {
    server.reset();
    const { logger, lines } = recordingLogger();
    server.enqueueEmbeddings({ kind: 'status', status: 500 }, { kind: 'status', status: 500 });
    const failed = await importKnowledge(database.prisma, [folder], { ...importOptions('embed-c', logger), prune: true });
    expect(failed.embeddings).toMatchObject({ model: 'embed-c', embedded: 0 });
    expect(failed.embeddings?.error).toContain('embeddings unavailable');
    expect(lines.map((l) => l['message'])).toContain('knowledge embeddings failed; passages stay lexical-only until the next import');
    const resumed = await importKnowledge(database.prisma, [folder], importOptions('embed-c'));
    expect(resumed.embeddings).toMatchObject({ embedded: (await kbEmbeddingCounts(database.sql, 'embed-c')).embedded, error: null });
    expect((await kbEmbeddingCounts(database.sql, 'embed-c')).pending).toBe(0);
  });
});
