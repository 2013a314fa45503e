/**
 * Knowledge base: retrieval quality on the fixture help center's labelled questions
 * (fixtures/knowledge/questions.json), the offline drafts' grounding, and how the search time
 * grows with the number of passages (the search reads stored vectors through a GIN index).
 *
 * Runs on embedded PGlite (the default database): the fixture folder is imported with
 * `importKnowledge`, recall@k uses the same query path as a reply turn. For the scale figure the
 * fixture passages are copied in SQL to the sizes below and the labelled questions searched again.
 */
import { importKnowledge } from '../../src/app/import-knowledge.ts';
import { kbQueryTerms } from '../../src/memory/knowledge.ts';
import { openMemoryDatabase } from '../../src/store/database.ts';
import { searchKbPassages } from '../../src/store/knowledge.ts';
import { applyMigrations } from '../../src/store/migrator.ts';
import { KNOWLEDGE_DOCS, knowledgeRecall, labelledQuestions, offlineDraftGrounding } from '../../test/support/knowledge-questions.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, NO_TARGET, round, type Figure, type PhaseResult } from '../report.ts';

const SIZES_QUICK = [1_000, 5_000] as const;
const SIZES_FULL = [1_000, 10_000, 50_000] as const;
/** A reply turn's search should stay well under a turn's other costs. */
const SEARCH_TARGET_MS = 100;

export async function runKnowledge(ctx: PhaseContext): Promise<PhaseResult> {
  const database = await openMemoryDatabase();
  ctx.defer('knowledge database', () => database.close());
  await applyMigrations(database.adapterFactory);
  const report = await importKnowledge(database.prisma, [KNOWLEDGE_DOCS], { lang: 'en' });
  const at5 = await knowledgeRecall(database.sql, 5);
  const at1 = await knowledgeRecall(database.sql, 1);
  const drafts = await offlineDraftGrounding(database.sql, 4);
  ctx.log(`recall@5 ${at5.hits}/${at5.answerable}, recall@1 ${at1.hits}/${at1.answerable}`);

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
  const scale: Array<{ passages: number; medianMs: number; p95Ms: number }> = [];
  for (const size of [base, ...(ctx.quick ? SIZES_QUICK : SIZES_FULL)]) {
    const copies = Math.ceil(size / base) - 1;
    const current = Number((await database.sql.query('SELECT count(*)::int AS n FROM "KbPassage"'))[0]!['n']);
    if (copies > 0 && current < base * (copies + 1)) {
      const from = current / base;
      await database.sql.query(
        `INSERT INTO "KbPassage" ("id", "documentId", "ordinal", "titlePath", "text", "searchText", "searchVector", "tokens")
         SELECT 'copy' || g || '_' || p."id", p."documentId", p."ordinal" + g * 10000, p."titlePath", p."text", p."searchText", p."searchVector", p."tokens"
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
    times.sort((a, b) => a - b);
    const point = {
      passages,
      medianMs: round(times[Math.floor(times.length / 2)]!),
      p95Ms: round(times[Math.floor(times.length * 0.95)]!),
    };
    scale.push(point);
    ctx.log(`search at ${passages} passages: median ${point.medianMs} ms, p95 ${point.p95Ms} ms`);
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
    );
  }
  return {
    figures,
    inputs: {
      knowledge: {
        documents: report.created.length,
        passages: base,
        questions: labelledQuestions().length,
        scale,
        largestWithinTarget: largestFine?.passages ?? null,
        flagged: drafts.flagged,
      },
    },
  };
}
