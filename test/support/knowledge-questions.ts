/**
 * The fixture help center's labelled questions (fixtures/knowledge/questions.json) and recall@k
 * of the knowledge search on them, for the integration test and the bench.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { kbQueryTerms } from '../../src/memory/knowledge.ts';
import type { SqlExecutor } from '../../src/store/sql.ts';

export const KNOWLEDGE_DOCS = path.resolve(import.meta.dirname, '../../fixtures/knowledge/docs');

const questionsSchema = z.array(
  z.object({
    id: z.string(),
    question: z.string(),
    lang: z.string(),
    answers: z.array(z.object({ doc: z.string(), section: z.string() })),
  }),
);
export type LabelledQuestion = z.infer<typeof questionsSchema>[number];

export function labelledQuestions(): LabelledQuestion[] {
  return questionsSchema.parse(JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../fixtures/knowledge/questions.json'), 'utf8')));
}

export interface RecallResult {
  /** Answerable questions whose top k held a labelled passage, over all answerable questions. */
  recall: number;
  answerable: number;
  hits: number;
  misses: string[];
}

/**
 * recall@k with the same query path as a reply turn (kbQueryTerms, then the store's search), with
 * each passage matched to the labels by its document and heading path.
 */
export async function knowledgeRecall(sql: SqlExecutor, k: number): Promise<RecallResult> {
  const { searchKbPassages } = await import('../../src/store/knowledge.ts');
  const rows = await sql.query(`SELECT p."id", d."source" FROM "KbPassage" p JOIN "KbDocument" d ON d."id" = p."documentId"`);
  const sourceOf = new Map(rows.map((r) => [String(r['id']), String(r['source'])]));
  let hits = 0;
  const misses: string[] = [];
  const answerable = labelledQuestions().filter((q) => q.answers.length > 0);
  for (const q of answerable) {
    const found = await searchKbPassages(sql, kbQueryTerms(q.question), k);
    const hit = found.some((p) => q.answers.some((a) => sourceOf.get(p.id) === a.doc && p.titlePath.includes(a.section)));
    if (hit) hits++;
    else misses.push(`${q.id} ${q.question}`);
  }
  return { recall: hits / answerable.length, answerable: answerable.length, hits, misses };
}
