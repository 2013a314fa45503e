/**
 * A reply turn with OPENAI_EMBEDDING_MODEL set, live (real `openai` client, scripted server): the
 * question is embedded and the by-meaning ranking brings a paraphrase's passage into the prompt;
 * with the embeddings endpoint failing, the turn still drafts, from the lexical ranking.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKnowledge } from '../../src/app/import-knowledge.ts';
import { customerEmail, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';
import { kbQueryTerms } from '../../src/memory/knowledge.ts';
import { searchKbPassages } from '../../src/store/knowledge.ts';
import { KNOWLEDGE_DOCS } from '../support/knowledge-questions.ts';

let h: AgentHarness;
beforeAll(async () => {
  h = await startAgentHarness({ REPLY_MODE: 'draft', OPENAI_EMBEDDING_MODEL: 'scripted-embedding' });
  const report = await importKnowledge(h.runtime.db, [KNOWLEDGE_DOCS], { ...h.runtime.kbImportOptions(), lang: 'en' });
  expect(report.embeddings).toMatchObject({ model: 'scripted-embedding', embedded: report.passages, error: null });
}, 90_000);
afterAll(async () => {
  await h?.close();
});

async function promptFor(question: string): Promise<{ user: string; status: string }> {
  const before = h.llm.requests.length;
  h.llm.enqueue({ kind: 'json', content: turnAnswer({ body: 'Hello,\n\na colleague will follow up.\n\nAcme Support' }) });
  const ingested = await h.ingest(
    customerEmail({ from: `kbe-${Math.random().toString(36).slice(2)}@customer.example`, subject: 'Question', body: question }),
  );
  const drafts = await waitFor(
    () => h.runtime.db.draft.findMany({ where: { threadId: ingested.threadId! } }),
    (d) => d.length === 1,
    20_000,
    'the draft',
  );
  const request = h.llm.requests.slice(before).find((r) => r.schemaName === 'message_turn');
  return { user: String(request?.body.messages.find((m) => m.role === 'user')?.content ?? ''), status: drafts[0]!.status };
}

describe('a reply turn with embeddings', () => {
  it('embeds the question and puts the passage found by meaning in the prompt', async () => {
    const question = 'The tax ID is not shown on our bill';
    const vat = 'Invoices and receipts > VAT number missing on an invoice';
    // The lexical search alone does not find it.
    const lexical = await searchKbPassages(h.runtime.database.sql, kbQueryTerms(question), 4);
    expect(lexical.map((p) => p.titlePath)).not.toContain(vat);
    const embeddedBefore = h.llm.embeddingRequests.length;
    const { user } = await promptFor(question);
    expect(h.llm.embeddingRequests.slice(embeddedBefore).some((r) => r.input.some((i) => i.includes(question)))).toBe(true);
    expect(user).toContain(vat);
  });

  it('drafts from the lexical ranking when the embeddings endpoint fails', async () => {
    // OPENAI_MAX_RETRIES=2 in the harness: three failures and the embedder gives up.
    h.llm.enqueueEmbeddings({ kind: 'status', status: 503 }, { kind: 'status', status: 503 }, { kind: 'status', status: 503 });
    const { user, status } = await promptFor('How do I export a report to Excel?');
    expect(status).toBe('draft');
    expect(user).toContain('Exporting reports to Excel and CSV > Export a report');
  });
});
