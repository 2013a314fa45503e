/**
 * `support-agent eval` on a tiny history whose scores are computed by hand, with the real OpenAI
 * client against the scripted model; and the history readers (mbox, Maildir) on real files.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatEvalTable } from '../../src/cli/commands/eval.ts';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/logger.ts';
import { readHistory } from '../../src/replay/history-files.ts';
import { runEval } from '../../src/replay/run-eval.ts';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';

let llm: ScriptedLlmServer;
let dir: string;

function mail(fields: {
  from: string;
  to: string;
  id: string;
  date: string;
  body: string;
  inReplyTo?: string;
  needsHuman?: string;
}): string {
  return [
    `From ${fields.from.replace(/.*</, '').replace('>', '')} ${fields.date}`,
    `From: ${fields.from}`,
    `To: ${fields.to}`,
    `Subject: ${fields.inReplyTo ? 'Re: ' : ''}Order question`,
    `Date: ${fields.date}`,
    `Message-ID: ${fields.id}`,
    ...(fields.inReplyTo ? [`In-Reply-To: ${fields.inReplyTo}`, `References: ${fields.inReplyTo}`] : []),
    ...(fields.needsHuman ? [`X-Needs-Human: ${fields.needsHuman}`] : []),
    'Content-Type: text/plain; charset=utf-8',
    '',
    fields.body,
    '',
  ].join('\n');
}

const SUPPORT = 'Acme Support <support@acme.example>';
const MAILS = [
  mail({
    from: 'Alice <alice@example.com>',
    to: SUPPORT,
    id: '<a1@example.com>',
    date: 'Mon, 05 Oct 2026 09:00:00 +0000',
    body: 'My order A-1234 has not arrived.',
  }),
  mail({
    from: SUPPORT,
    to: 'alice@example.com',
    id: '<t1@acme.example>',
    date: 'Mon, 05 Oct 2026 09:10:00 +0000',
    body: 'Your order A-1234 ships on Monday.',
    inReplyTo: '<a1@example.com>',
    needsHuman: 'no',
  }),
  mail({
    from: 'Bob <bob@example.org>',
    to: SUPPORT,
    id: '<b1@example.org>',
    date: 'Mon, 05 Oct 2026 09:20:00 +0000',
    body: 'I want my money back.',
  }),
  mail({
    from: SUPPORT,
    to: 'bob@example.org',
    id: '<t2@acme.example>',
    date: 'Mon, 05 Oct 2026 09:30:00 +0000',
    body: 'Refund approved.',
    inReplyTo: '<b1@example.org>',
    needsHuman: 'yes',
  }),
];
/** The customers' mail (the inbox) and the team's replies (the Sent folder), exported apart. */
const INBOX = [MAILS[0], MAILS[2]].join('\n');
const SENT = [MAILS[1], MAILS[3]].join('\n');

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'sa-eval-'));
  llm = await startScriptedLlmServer();
  llm.setFallback((request) => {
    if (request.schemaName !== 'message_turn')
      return { kind: 'json', content: { topic: 'order', facts: [], commitments: [], commitmentUpdates: [] } };
    const prompt = JSON.stringify(request.body.messages);
    return {
      kind: 'json',
      content: {
        reply: { body: prompt.includes('A-1234') ? 'Your order A-1234 ships Monday.' : 'We sent 7319 EUR back.', needsHuman: false },
        summary: 's',
        openItems: [],
        currentIntent: 'order_status',
        tags: [],
        resolved: false,
      },
    };
  });
}, 30_000);

afterAll(async () => {
  await llm?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function evalConfig(extra: Record<string, string> = {}) {
  return loadConfig({
    LLM_PROVIDER: 'openai',
    OPENAI_API_KEY: 'sk-test-eval-0001',
    OPENAI_BASE_URL: llm.url,
    OPENAI_MAX_RETRIES: '0',
    SUPPORT_ADDRESS: 'support@acme.example',
    ...extra,
  });
}

describe('support-agent eval', () => {
  it('scores each draft against the team’s real reply by hand-computed values', async () => {
    const file = path.join(dir, 'tiny.mbox');
    const sent = path.join(dir, 'tiny-sent.mbox');
    await writeFile(file, INBOX);
    await writeFile(sent, SENT);
    const report = await runEval({ input: file, sent, address: 'support@acme.example', config: evalConfig(), logger: silentLogger });
    expect(report.failures).toEqual([]);
    expect(report).toMatchObject({ messages: 4, customerMails: 2, answered: 2, undrafted: 0, unprovenTeamMails: 0 });
    const [alice, bob] = report.pairs;
    // Word pairs: draft {your order, order a, a 1234, 1234 ships, ships monday}, team reply
    // {your order, order a, a 1234, 1234 ships, ships on, on monday}: 4 shared, 2·4/(5+6) = 0.727.
    expect(alice).toMatchObject({
      customerMessageId: '<a1@example.com>',
      teamReplyMessageId: '<t1@acme.example>',
      similarity: 0.727,
      identifiers: ['A-1234'],
      ungrounded: [],
      grounded: true,
      // The outbound guard held the draft for a person (it names a delivery day); the team says none was needed.
      needsHumanAgrees: false,
      modelCalls: 1,
    });
    // Nothing shared; "7319" is in no part of what the model was given; held for a person (an amount of
    // money), as the team says it should be.
    expect(bob).toMatchObject({
      customerMessageId: '<b1@example.org>',
      similarity: 0,
      identifiers: ['7319'],
      ungrounded: ['7319'],
      grounded: false,
      needsHumanAgrees: true,
      modelCalls: 1,
    });
    expect(report.summary).toMatchObject({
      pairs: 2,
      groundedRate: 0.5,
      needsHumanAgreement: 0.5,
      modelCallsPerTurn: 1,
      factsUsedRate: null,
    });
    // (0.727 + 0) / 2, rounded to three places; with two pairs the median is the mean.
    expect(report.summary.meanSimilarity).toBe(0.364);
    expect(report.summary.medianSimilarity).toBeCloseTo(0.3635, 2);

    const table = formatEvalTable(report, { provider: 'offline', model: 'rules', summary: { ...report.summary, groundedRate: 1 } });
    expect(table).toMatch(/share of drafts with no invented number\s+0\.500\s+1\s+-0\.500/);
  }, 60_000);

  it('decides the team’s mail by channel or authentication, never by From alone', async () => {
    const trusted = 'mx.acme.example';
    const authenticated = (raw: string, result: string) =>
      raw.replace('From: Acme', `Authentication-Results: ${trusted}; dmarc=${result} header.from=acme.example\nFrom: Acme`);
    // In the inbox history: the reply to Alice with an aligned pass (the team's), the reply to Bob
    // with dmarc=fail (a stranger's); in the Sent export, Alice's own mail forwarded (not the team's).
    const file = path.join(dir, 'proof.mbox');
    const sent = path.join(dir, 'proof-sent.mbox');
    await writeFile(file, [MAILS[0], authenticated(MAILS[1]!, 'pass'), MAILS[2], authenticated(MAILS[3]!, 'fail')].join('\n'));
    await writeFile(sent, MAILS[0]!.replace('<a1@example.com>', '<a1-fwd@example.com>'));
    const report = await runEval({
      input: file,
      sent,
      address: 'support@acme.example',
      config: evalConfig({ TRUSTED_AUTHSERV_ID: trusted }),
      logger: silentLogger,
    });
    expect(report).toMatchObject({ messages: 5, customerMails: 2, answered: 1, unprovenTeamMails: 1 });
    expect(report.pairs.map((p) => p.teamReplyMessageId)).toEqual(['<t1@acme.example>']);
  }, 60_000);

  it('reads an mbox (mboxrd quoting undone) and a Maildir', async () => {
    const file = path.join(dir, 'quoted.mbox');
    await writeFile(
      file,
      mail({ from: 'C <c@example.com>', to: SUPPORT, id: '<c1@x>', date: 'Mon, 05 Oct 2026 09:00:00 +0000', body: '>From the start.' }),
    );
    const [one] = await readHistory(file, 1_000_000);
    expect(one!.raw.toString()).toContain('\n\nFrom the start.');

    const maildir = path.join(dir, 'Maildir');
    for (const sub of ['cur', 'new', 'tmp']) await mkdir(path.join(maildir, sub), { recursive: true });
    await writeFile(path.join(maildir, 'cur', '1.host:2,S'), 'Subject: a\n\none');
    await writeFile(path.join(maildir, 'new', '2.host'), 'Subject: b\n\ntwo');
    await writeFile(path.join(maildir, 'tmp', '3.host'), 'Subject: c\n\nnot delivered yet');
    expect((await readHistory(maildir, 1_000_000)).map((m) => m.name).sort()).toEqual([
      path.join('cur', '1.host:2,S'),
      path.join('new', '2.host'),
    ]);

    const fixture = await readHistory(path.join(import.meta.dirname, '../../fixtures/eval/history.mbox'), 1_000_000);
    const fixtureSent = await readHistory(path.join(import.meta.dirname, '../../fixtures/eval/sent.mbox'), 1_000_000);
    expect(fixture.length + fixtureSent.length).toBeGreaterThanOrEqual(40);
    expect(fixtureSent.every((m) => m.raw.toString().includes('From: Acme Support <support@acme.example>'))).toBe(true);
  });
});
