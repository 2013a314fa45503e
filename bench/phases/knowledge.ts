/**
 * Knowledge base: retrieval quality on the fixture help center's labelled questions
 * (fixtures/knowledge/questions.json), the offline drafts' grounding, and how the search time
 * grows with the number of passages (the search reads stored vectors through a GIN index).
 *
 * Runs on embedded PGlite (the default database): the fixture folder is imported with
 * `importKnowledge`, recall@k uses the same query path as a reply turn. For the scale figure the
 * fixture passages are copied in SQL to the sizes below and the labelled questions searched again.
 *
 * With embeddings: the scripted OpenAI-compatible server (in this process, loopback HTTP, the real
 * `openai` client) serves deterministic vectors; recall@5 lexical and fused on the labelled and the
 * paraphrased questions, and at each size the time of the ranking by meaning (brute-force cosine
 * in process) and of the whole fused search against the lexical search at the same size, plus
 * the in-process cosine alone at 1,536 dimensions (a real model's width) on synthetic vectors.
 */
import { importKnowledge } from '../../src/app/import-knowledge.ts';
import { InProcessVectorIndex, KnowledgeSearch } from '../../src/app/knowledge-search.ts';
import { OpenAiEmbedder } from '../../src/llm/embeddings.ts';
import { silentLogger } from '../../src/logger.ts';
import { cosineTopK, unitVector } from '../../src/memory/vector-rank.ts';
import { startScriptedLlmServer } from '../../test/support/scripted-llm-server.ts';
import { kbQueryTerms } from '../../src/memory/knowledge.ts';
import { openMemoryDatabase } from '../../src/store/database.ts';
import { searchKbPassages } from '../../src/store/knowledge.ts';
import { applyMigrations } from '../../src/store/migrator.ts';
import {
  KNOWLEDGE_DOCS,
  knowledgeRecall,
  labelledQuestions,
  offlineDraftGrounding,
  paraphrasedQuestions,
} from '../../test/support/knowledge-questions.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, NO_TARGET, round, type Figure, type PhaseResult } from '../report.ts';

const SIZES_QUICK = [1_000, 5_000] as const;
const SIZES_FULL = [1_000, 10_000, 50_000] as const;
const EMBEDDING_MODEL = 'scripted-embedding';
const SCRIPTED_DIMENSIONS = 256;
const WIDE_DIMENSIONS = 1_536;

function medianP95(samples: number[]): { medianMs: number; p95Ms: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { medianMs: round(sorted[Math.floor(sorted.length / 2)]!), p95Ms: round(sorted[Math.floor(sorted.length * 0.95)]!) };
}

/** A reply turn's search should stay well under a turn's other costs. */
const SEARCH_TARGET_MS = 100;

export async function runKnowledge(ctx: PhaseContext): Promise<PhaseResult> {
  const database = await openMemoryDatabase();
  ctx.defer('knowledge database', () => database.close());
  await applyMigrations(database.adapterFactory);
  const server = await startScriptedLlmServer();
  ctx.defer('scripted embeddings server', () => server.close());
  const embedder = new OpenAiEmbedder(
    { model: EMBEDDING_MODEL, apiKey: 'bench', baseUrl: server.url, batch: 64, inputTokens: 2000, timeoutMs: 30_000, maxRetries: 0 },
    silentLogger,
  );
  const index = new InProcessVectorIndex(database.sql);
  const search = new KnowledgeSearch(database.sql, { embedder, index }, silentLogger);
  const fused = async (q: string, k: number) => (await search.search(q, k)).hits;
  const report = await importKnowledge(database.prisma, [KNOWLEDGE_DOCS], {
    lang: 'en',
    embeddings: { embedder, batch: 64, logger: silentLogger, sql: database.sql },
  });
  const at5 = await knowledgeRecall(database.sql, 5);
  const fused5 = await knowledgeRecall(database.sql, 5, { search: fused });
  const fused1 = await knowledgeRecall(database.sql, 1, { search: fused });
  const paraphrases = paraphrasedQuestions();
  const para5 = await knowledgeRecall(database.sql, 5, { questions: paraphrases });
  const paraFused5 = await knowledgeRecall(database.sql, 5, { questions: paraphrases, search: fused });
  const at1 = await knowledgeRecall(database.sql, 1);
  const drafts = await offlineDraftGrounding(database.sql, 4);
  ctx.log(
    `recall@5 ${at5.hits}/${at5.answerable} (fused ${fused5.hits}), recall@1 ${at1.hits}/${at1.answerable} (fused ${fused1.hits}); paraphrased recall@5 ${para5.hits}/${para5.answerable} (fused ${paraFused5.hits})`,
  );

  const figures: Figure[] = [
    figure({
      name: 'knowledge recall@5 (lexical)',
      value: at5.recall,
      unit: 'share',
      baseline: null,
      target: '>= 0.85',
      met: at5.recall >= 0.85,
      notes: `${at5.hits}/${at5.answerable} answerable questions; misses: ${at5.misses.join(' | ') || 'none'}`,
    }),
    figure({
      name: 'knowledge recall@1 (lexical)',
      value: at1.recall,
      unit: 'share',
      baseline: null,
      target: NO_TARGET,
      met: null,
      notes: `${at1.hits}/${at1.answerable}`,
    }),
    figure({
      name: 'knowledge recall@5 (fused with the scripted embeddings)',
      value: fused5.recall,
      unit: 'share',
      baseline: at5.recall,
      target: '>= lexical',
      met: fused5.recall >= at5.recall,
      notes: `${fused5.hits}/${fused5.answerable}; recall@1 fused ${fused1.hits}/${fused1.answerable} (lexical ${at1.hits}); misses: ${fused5.misses.join(' | ') || 'none'}`,
    }),
    figure({
      name: 'paraphrased questions recall@5, fused (baseline: lexical)',
      value: paraFused5.recall,
      unit: 'share',
      baseline: para5.recall,
      target: '> lexical',
      met: paraFused5.recall > para5.recall,
      notes: `${paraFused5.hits}/${paraFused5.answerable} fused, ${para5.hits}/${para5.answerable} lexical; fused misses: ${paraFused5.misses.join(' | ') || 'none'}`,
    }),
    figure({
      name: 'no-answer questions: offline draft without an unsupported claim',
      value: drafts.noAnswerClean / drafts.noAnswer,
      unit: 'share',
      baseline: null,
      target: '1',
      met: drafts.noAnswerClean === drafts.noAnswer,
      notes: `${drafts.noAnswerClean}/${drafts.noAnswer}; answered anyway (wrongly): ${drafts.noAnswerAnswered}`,
    }),
    figure({
      name: 'answerable questions: offline draft answers from a labelled passage',
      value: drafts.answeredFromLabel / drafts.answerable,
      unit: 'share',
      baseline: null,
      target: NO_TARGET,
      met: null,
      notes: `${drafts.answeredFromLabel}/${drafts.answerable}; from another passage: ${drafts.answeredOther}; flagged by the gate: ${drafts.flagged.length}`,
    }),
  ];

  // Search time by number of passages: the fixture's passages copied in SQL.
  const questions = labelledQuestions().map((q) => kbQueryTerms(q.question));
  const base = Number((await database.sql.query('SELECT count(*)::int AS n FROM "KbPassage"'))[0]!['n']);
  const questionTexts = labelledQuestions().map((q) => q.question);
  const questionVectors = await embedder.embed(questionTexts);
  const scale: Array<{
    passages: number;
    medianMs: number;
    p95Ms: number;
    vector: { loadMs: number; medianMs: number; p95Ms: number };
    fused: { medianMs: number; p95Ms: number };
  }> = [];
  for (const size of [base, ...(ctx.quick ? SIZES_QUICK : SIZES_FULL)]) {
    const copies = Math.ceil(size / base) - 1;
    const current = Number((await database.sql.query('SELECT count(*)::int AS n FROM "KbPassage"'))[0]!['n']);
    if (copies > 0 && current < base * (copies + 1)) {
      const from = current / base;
      await database.sql.query(
        `INSERT INTO "KbPassage" ("id", "documentId", "ordinal", "titlePath", "text", "searchText", "searchVector", "tokens", "embedding", "embeddingModel", "embeddedAt")
         SELECT 'copy' || g || '_' || p."id", p."documentId", p."ordinal" + g * 10000, p."titlePath", p."text", p."searchText", p."searchVector", p."tokens",
                p."embedding", p."embeddingModel", now()
         FROM "KbPassage" p, generate_series($1::int, $2::int) g WHERE p."id" NOT LIKE 'copy%'`,
        [from, copies],
      );
    }
    const passages = Number((await database.sql.query('SELECT count(*)::int AS n FROM "KbPassage"'))[0]!['n']);
    const times: number[] = [];
    for (const terms of questions) {
      const started = performance.now();
      await searchKbPassages(database.sql, terms, 5);
      times.push(performance.now() - started);
    }
    // The first ranking by meaning after the copy (re)loads the vectors into the process.
    let started = performance.now();
    await index.nearest(EMBEDDING_MODEL, questionVectors[0]!, 20);
    const loadMs = performance.now() - started;
    const vectorTimes: number[] = [];
    for (const vector of questionVectors) {
      started = performance.now();
      await index.nearest(EMBEDDING_MODEL, vector, 20);
      vectorTimes.push(performance.now() - started);
    }
    const fusedTimes: number[] = [];
    for (const question of questionTexts) {
      started = performance.now();
      await search.search(question, 5);
      fusedTimes.push(performance.now() - started);
    }
    const point = {
      passages,
      ...medianP95(times),
      vector: { loadMs: round(loadMs), ...medianP95(vectorTimes) },
      fused: medianP95(fusedTimes),
    };
    scale.push(point);
    ctx.log(
      `search at ${passages} passages: lexical median ${point.medianMs} ms, p95 ${point.p95Ms} ms; by meaning median ${point.vector.medianMs} ms (load ${point.vector.loadMs} ms); fused median ${point.fused.medianMs} ms, p95 ${point.fused.p95Ms} ms`,
    );
  }
  // The cosine alone at a real model's width, synthetic unit vectors in process.
  const wide: Array<{ passages: number; medianMs: number; megabytes: number }> = [];
  for (const size of ctx.quick ? SIZES_QUICK : SIZES_FULL) {
    let seed = 17;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const vectors = Array.from({ length: size }, (_, i) => ({
      id: `v${i}`,
      vector: unitVector(Array.from({ length: WIDE_DIMENSIONS }, rand))!,
    }));
    const times: number[] = [];
    for (let q = 0; q < 20; q++) {
      const query = unitVector(Array.from({ length: WIDE_DIMENSIONS }, rand))!;
      const started = performance.now();
      cosineTopK(query, vectors, 20, -1);
      times.push(performance.now() - started);
    }
    const point = { passages: size, medianMs: medianP95(times).medianMs, megabytes: round((size * WIDE_DIMENSIONS * 4) / 1024 / 1024) };
    wide.push(point);
    ctx.log(`cosine at ${WIDE_DIMENSIONS} dimensions, ${size} vectors: median ${point.medianMs} ms, ${point.megabytes} MB of vectors`);
  }
  const largestFine = [...scale].reverse().find((p) => p.p95Ms <= SEARCH_TARGET_MS);
  for (const point of scale) {
    figures.push(
      figure({
        name: `knowledge search p95 at ${point.passages} passages`,
        value: point.p95Ms,
        unit: 'ms',
        baseline: null,
        target: `<= ${SEARCH_TARGET_MS} ms`,
        met: point.p95Ms <= SEARCH_TARGET_MS,
        notes: `median ${point.medianMs} ms; ${questions.length} questions; PGlite in process, GIN index`,
      }),
      figure({
        name: `knowledge fused search median at ${point.passages} passages (baseline: lexical)`,
        value: point.fused.medianMs,
        unit: 'ms',
        baseline: point.medianMs,
        target: `<= ${SEARCH_TARGET_MS} ms`,
        met: point.fused.p95Ms <= SEARCH_TARGET_MS,
        notes: `p95 ${point.fused.p95Ms} ms; by meaning alone median ${point.vector.medianMs} ms, p95 ${point.vector.p95Ms} ms (${SCRIPTED_DIMENSIONS} dimensions, brute force in process); first search after a change reloads the vectors: ${point.vector.loadMs} ms`,
      }),
    );
  }
  for (const point of wide)
    figures.push(
      figure({
        name: `cosine top-20 over ${point.passages} vectors of ${WIDE_DIMENSIONS} dimensions`,
        value: point.medianMs,
        unit: 'ms',
        baseline: null,
        target: NO_TARGET,
        met: null,
        notes: `median of 20 queries, in process, synthetic unit vectors; ${point.megabytes} MB of vectors held`,
      }),
    );
  return {
    figures,
    inputs: {
      knowledge: {
        documents: report.created.length,
        passages: base,
        questions: labelledQuestions().length,
        scale,
        wideCosine: wide,
        embeddingModel: EMBEDDING_MODEL,
        paraphrasedQuestions: paraphrases.length,
        largestWithinTarget: largestFine?.passages ?? null,
        flagged: drafts.flagged,
      },
    },
  };
}
