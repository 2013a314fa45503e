/**
 * Knowledge in a reply turn, live: the fixture help center imported, the real `openai` client
 * against the scripted server in REPLY_MODE=send. The matching passage is in the prompt with its
 * id; a draft citing it with a true quote is sent and its citation stored; a draft whose quote is
 * not in the cited passage, or that states a price with no citation, is held for a person.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { draftCard } from '../../src/console/pages/drafts.ts';
import { threadDraftCards } from '../../src/store/draft-review.ts';
import { importKnowledge } from '../../src/app/import-knowledge.ts';
import { customerEmail, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';
import { KNOWLEDGE_DOCS } from '../support/knowledge-questions.ts';

let h: AgentHarness;
let exportPassage: string;
beforeAll(async () => {
  h = await startAgentHarness({ REPLY_MODE: 'send' });
  await importKnowledge(h.runtime.db, [KNOWLEDGE_DOCS], { lang: 'en' });
  const passage = await h.runtime.db.kbPassage.findFirstOrThrow({
    where: { titlePath: 'Exporting reports to Excel and CSV > Export a report' },
  });
  exportPassage = passage.id;
}, 60_000);
afterAll(async () => {
  await h?.close();
});

async function draftAfter(question: string, answer: ReturnType<typeof turnAnswer> & { citations?: unknown[] }) {
  const before = h.llm.requests.length;
  h.llm.enqueue({ kind: 'json', content: answer });
  const ingested = await h.ingest(
    customerEmail({ from: `kb-${Math.random().toString(36).slice(2)}@customer.example`, subject: 'Question', body: question }),
  );
  const drafts = await waitFor(
    () => h.runtime.db.draft.findMany({ where: { threadId: ingested.threadId! } }),
    (d) => d.length === 1 && d[0]!.status !== 'queued' && d[0]!.status !== 'sending',
    20_000,
    'the draft to settle',
  );
  const request = h.llm.requests.slice(before).find((r) => r.schemaName === 'message_turn');
  const user = String(request?.body.messages.find((m) => m.role === 'user')?.content ?? '');
  return { draft: drafts[0]!, user };
}

const STEPS = [
  '1. Open the report you want to export.',
  '2. Click Export in the top right corner.',
  '3. Choose Excel (.xlsx) or CSV and click Download.',
];

describe('knowledge in a reply turn', () => {
  it('puts the matching passage in the prompt; a draft citing it truly is sent with its citations stored', async () => {
    const citations = STEPS.map((step) => ({ sentence: step, source: `kb:${exportPassage}`, quote: step.slice(3) }));
    const { draft, user } = await draftAfter('Hello, how do I export a report to Excel?', {
      ...turnAnswer({ body: ['Hello,', '', 'here is how:', ...STEPS, '', 'Acme Support'].join('\n') }),
      citations,
    });
    expect(user).toContain(`[kb:${exportPassage}] Exporting reports to Excel and CSV > Export a report`);
    expect(user).toContain('Click Export in the top right corner.');
    expect(draft.flags).toEqual([]);
    expect(draft).toMatchObject({ status: 'sent', needsHuman: false });
    expect(draft.citations).toEqual(citations);
    // The console shows the cited passage beside the draft.
    const [card] = await threadDraftCards(h.runtime.db, draft.threadId);
    const page = draftCard(card!, { id: 's', csrfToken: 't', createdAt: 0, lastSeenAt: 0 }, 'thread', true).value;
    expect(page).toContain(`kb:${exportPassage}`);
    expect(page).toContain('Exporting reports to Excel and CSV &gt; Export a report');
    expect(page).toContain('<blockquote>1. Open the report you want to export.');
    // …and every passage the prompt held: the cited one marked so, the others given but not cited, each linked.
    expect(card!.passagesGiven[0]).toMatchObject({ id: exportPassage, rank: 1, cited: true });
    const uncited = card!.passagesGiven.filter((p) => !p.cited);
    expect(uncited.length).toBeGreaterThan(0);
    for (const p of card!.passagesGiven) expect(user).toContain(`[kb:${p.id}]`);
    expect(page).toContain(`<a href="/knowledge/passage/${exportPassage}">Exporting reports to Excel and CSV &gt; Export a report</a>`);
    expect(page).toMatch(new RegExp(`kb:${exportPassage}</span> · <strong>cited</strong>`));
    expect(page).toContain(`<a href="/knowledge/passage/${uncited[0]!.id}">`);
    expect(page).toMatch(new RegExp(`kb:${uncited[0]!.id}</span> · given, not cited`));
    // A hostile title or id stays text.
    const hostile = draftCard(
      {
        ...card!,
        passagesGiven: [{ id: 'x"><script>', title: '<b>Doc</b>', titlePath: '<img src=x onerror=alert(1)>', rank: 1, cited: false }],
      },
      { id: 's', csrfToken: 't', createdAt: 0, lastSeenAt: 0 },
      'drafts',
      true,
    ).value;
    expect(hostile).not.toMatch(/<img|<script|<b>Doc/);
    expect(hostile).toContain('href="/knowledge/passage/x%22%3E%3Cscript%3E"');
    expect(hostile).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('holds a draft whose quote is not in the cited passage', async () => {
    const sentence = '1. Open Settings > Exports and click Excel.';
    const { draft } = await draftAfter('How do I export to Excel?', {
      ...turnAnswer({ body: `Hello,\n\n${sentence}\n\nAcme Support` }),
      citations: [{ sentence, source: `kb:${exportPassage}`, quote: 'Open Settings > Exports and click Excel' }],
    });
    expect(draft).toMatchObject({ status: 'draft', needsHuman: true });
    expect((draft.flags as Array<{ rule: string }>).map((f) => f.rule)).toContain('citation-not-in-source');
  });

  it('holds a draft that states a price with no citation, even when the price is in a passage it was given', async () => {
    const { draft, user } = await draftAfter('How much does the Business plan cost?', {
      ...turnAnswer({ body: 'Hello,\n\nThe Business plan costs 19 EUR per seat per month.\n\nAcme Support' }),
      citations: [],
    });
    expect(user).toContain('19 EUR per seat per month');
    expect(draft).toMatchObject({ status: 'draft', needsHuman: true });
    expect(draft.flags).toEqual([
      expect.objectContaining({ rule: 'unsupported-claim', excerpt: 'The Business plan costs 19 EUR per seat per month.' }),
    ]);
  });

  it('holds a draft that cites a source it was never given', async () => {
    const sentence = 'Refunds are possible within 60 days.';
    const { draft } = await draftAfter('What is your refund window?', {
      ...turnAnswer({ body: `Hello,\n\n${sentence}\n\nAcme Support` }),
      citations: [{ sentence, source: 'kb:kp_made_up', quote: 'within 60 days' }],
    });
    expect(draft).toMatchObject({ status: 'draft', needsHuman: true });
    expect((draft.flags as Array<{ rule: string }>).map((f) => f.rule)).toEqual(
      expect.arrayContaining(['citation-unknown-source', 'unsupported-claim']),
    );
  });
});
