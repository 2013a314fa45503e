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
  return questionsSchema.parse(
    JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../fixtures/knowledge/questions.json'), 'utf8')),
  );
}

/**
 * Questions that say in other words what a passage says (fixtures/knowledge/paraphrases.json):
 * written after the documents, avoiding their wording, to see what ranking by meaning adds.
 */
export function paraphrasedQuestions(): LabelledQuestion[] {
  return questionsSchema.parse(
    JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../fixtures/knowledge/paraphrases.json'), 'utf8')),
  );
}

/** A search as recall is measured on: the question's text → passages, best first. */
export type Searcher = (question: string, k: number) => Promise<Array<{ id: string; titlePath: string }>>;

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
export async function knowledgeRecall(
  sql: SqlExecutor,
  k: number,
  options: { search?: Searcher; questions?: LabelledQuestion[] } = {},
): Promise<RecallResult> {
  const { searchKbPassages } = await import('../../src/store/knowledge.ts');
  const search: Searcher = options.search ?? ((question, limit) => searchKbPassages(sql, kbQueryTerms(question), limit));
  const rows = await sql.query(`SELECT p."id", d."source" FROM "KbPassage" p JOIN "KbDocument" d ON d."id" = p."documentId"`);
  const sourceOf = new Map(rows.map((r) => [String(r['id']), String(r['source'])]));
  let hits = 0;
  const misses: string[] = [];
  const answerable = (options.questions ?? labelledQuestions()).filter((q) => q.answers.length > 0);
  for (const q of answerable) {
    const found = await search(q.question, k);
    const hit = found.some((p) => q.answers.some((a) => sourceOf.get(p.id) === a.doc && p.titlePath.includes(a.section)));
    if (hit) hits++;
    else misses.push(`${q.id} ${q.question}`);
  }
  return { recall: hits / answerable.length, answerable: answerable.length, hits, misses };
}

export interface OfflineDraftResult {
  /** No-answer questions whose offline draft makes no claim the gate rejects, over all no-answer questions. */
  noAnswerClean: number;
  noAnswer: number;
  /** No-answer questions the offline provider still answered from a passage (a wrong answer, though cited). */
  noAnswerAnswered: number;
  /** Answerable questions the offline provider answered from a labelled passage (cited, and the gate passed). */
  answeredFromLabel: number;
  answerable: number;
  /** Answerable questions the offline provider answered from a passage that is not a labelled one. */
  answeredOther: number;
  /** Drafts (of any question) the gate flagged. */
  flagged: string[];
}

/**
 * Drafts each question with the offline provider, given the top `k` passages as a reply turn
 * would give them, and runs the grounding gate on the draft.
 */
export async function offlineDraftGrounding(sql: SqlExecutor, k: number): Promise<OfflineDraftResult> {
  const { searchKbPassages } = await import('../../src/store/knowledge.ts');
  const { OfflineProvider } = await import('../../src/llm/offline-provider.ts');
  const { checkGrounding } = await import('../../src/memory/grounding.ts');
  const rows = await sql.query(`SELECT p."id", d."source" FROM "KbPassage" p JOIN "KbDocument" d ON d."id" = p."documentId"`);
  const sourceOf = new Map(rows.map((r) => [String(r['id']), String(r['source'])]));
  const provider = new OfflineProvider();
  const result: OfflineDraftResult = {
    noAnswerClean: 0,
    noAnswer: 0,
    noAnswerAnswered: 0,
    answeredFromLabel: 0,
    answerable: 0,
    answeredOther: 0,
    flagged: [],
  };
  for (const q of labelledQuestions()) {
    const passages = await searchKbPassages(sql, kbQueryTerms(q.question), k);
    const email = {
      messageId: `<${q.id}@customer.example>`,
      fromAddress: 'customer@customer.example',
      fromName: 'Sam Lee',
      date: new Date('2026-11-20T10:00:00Z'),
      text: q.question,
    };
    const thread = {
      subject: q.question,
      summary: '',
      openItems: [],
      pinnedItems: [],
      currentIntent: '',
      tags: [],
      status: 'open' as const,
    };
    const answer = await provider.messageTurn({
      prompt: { system: '', user: '' },
      thread,
      profile: null,
      emails: [email],
      supportName: 'Acme Support',
      summaryTokenCap: 200,
      knowledge: passages,
    });
    if (!answer.ok) throw new Error(answer.error);
    const review = checkGrounding({
      body: answer.value.reply.body,
      citations: answer.value.citations,
      passages,
      facts: [],
      messages: [{ messageId: email.messageId, text: email.text }],
      notes: '',
    });
    if (review.findings.length > 0) result.flagged.push(`${q.id}: ${review.findings.map((f) => `${f.rule} ${f.excerpt}`).join('; ')}`);
    if (q.answers.length === 0) {
      result.noAnswer++;
      if (review.findings.length === 0) result.noAnswerClean++;
      if (answer.value.citations.length > 0) result.noAnswerAnswered++;
    } else {
      result.answerable++;
      const label = (id: string) =>
        passages.find((p) => p.id === id && q.answers.some((a) => sourceOf.get(id) === a.doc && p.titlePath.includes(a.section)));
      if (review.findings.length === 0 && review.citedPassages.some((id) => label(id))) result.answeredFromLabel++;
      else if (answer.value.citations.length > 0) result.answeredOther++;
    }
  }
  return result;
}
