// The review console end to end: real PostgreSQL, Redis, workers, SMTP sink, scripted LLM, and a
// real headless Chromium clicking through the pages as an operator would.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime, type Runtime } from '../../src/app/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { startConsole, type RunningConsole } from '../../src/console/server.ts';
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import { createLogger, silentLogger } from '../../src/logger.ts';
import { advanceCheckpoint, recordPollerStatus } from '../../src/store/mailboxes.ts';
import { startWorkers, type RunningWorkers } from '../../src/app/start-workers.ts';
import { launchBrowser, screenshot, textOf, visible } from '../support/browser.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { startScriptedLlmServer, type RecordedRequest, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';

const PASSWORD = 'correct horse battery staple';
const SUPPORT = 'support@acme.example';
const REDIS_URL = 'redis://127.0.0.1:6379';
const QUEUE_PREFIX = `console-test-${randomBytes(4).toString('hex')}`;

interface TurnScript {
  body?: string;
  needsHuman?: boolean;
  summary?: string;
  openItems?: string[];
  tags?: string[];
  pin?: string[];
}

/** Per-email answers of the scripted model, keyed by the `case-…` token in the email. */
const scripts = new Map<string, TurnScript>();
/** Per-email promotion answers, keyed likewise (a pass that shows the email answers with these). */
const promotionScripts = new Map<string, { facts?: unknown[]; commitments?: unknown[] }>();

function userPrompt(request: RecordedRequest): string {
  return request.body.messages
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

function fullPrompt(request: RecordedRequest): string {
  return request.body.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
}

/** The case token of the email a turn answers (the new email, not the notes). */
function caseOf(request: RecordedRequest): string | null {
  const prompt = userPrompt(request);
  const latest = prompt.slice(prompt.lastIndexOf('NEW EMAIL TO ANSWER'));
  return /case-[a-z0-9]+/.exec(latest)?.[0] ?? null;
}

function newCase(): string {
  return `case-${randomBytes(4).toString('hex')}`;
}

function eml(options: { from: string; subject: string; body: string; messageId: string; inReplyTo?: string }): Buffer {
  return Buffer.from(
    [
      `From: ${options.from}`,
      `To: Support <${SUPPORT}>`,
      `Subject: ${options.subject}`,
      `Message-ID: ${options.messageId}`,
      ...(options.inReplyTo ? [`In-Reply-To: ${options.inReplyTo}`, `References: ${options.inReplyTo}`] : []),
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      options.body,
      '',
    ].join('\r\n'),
  );
}

/** Polls until `probe` returns something truthy; bounded, so a broken pipeline fails the test instead of hanging it. */
async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Logs in the way a browser would, with fetch; returns the session cookie and the page's form token. */
async function fetchLogin(baseUrl: string, password = PASSWORD): Promise<{ cookie: string; csrf: string }> {
  const form = await fetch(`${baseUrl}/login`);
  const loginCookie = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const token = /name="_login" value="([^"]+)"/.exec(await form.text())![1]!;
  const login = await fetch(`${baseUrl}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: loginCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ password, _login: token }),
  });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('sa_session='))
    ?.split(';')[0];
  if (!cookie) throw new Error(`login failed with status ${login.status}`);
  const page = await (await fetch(`${baseUrl}/drafts`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page)![1]! };
}

describe('the review console', () => {
  let db: TestDatabase;
  let llm: ScriptedLlmServer;
  let sink: SmtpSink;
  let runtime: Runtime;
  let workers: RunningWorkers;
  let server: RunningConsole;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const logLines: string[] = [];
  const sessionIds = new Set<string>();
  /** Any alert() that ever opened: a script from mail ran. */
  const dialogs: string[] = [];

  /** A customer writes in; resolves with the stored draft once the worker has drafted the reply. */
  async function customerWrites(options: { from: string; subject?: string; text?: string; script?: TurnScript; inReplyTo?: string }) {
    const token = newCase();
    if (options.script) scripts.set(token, options.script);
    const messageId = `<${token}@example.net>`;
    const raw = eml({
      from: options.from,
      subject: `${options.subject ?? 'Question about my invoice'} [${token}]`,
      body: `${options.text ?? 'Hello, I was charged twice this month. Can you help?'}\r\n\r\nReference ${token}`,
      messageId,
      ...(options.inReplyTo ? { inReplyTo: options.inReplyTo } : {}),
    });
    const ingested = await ingestRawMessage(runtime.ingestDeps({ logger: silentLogger }), raw, { kind: 'api' });
    expect(ingested.outcome).toBe('processed');
    const threadId = ingested.threadId!;
    const draft = await waitFor(`a draft for ${token}`, () =>
      runtime.db.draft.findFirst({ where: { threadId, turn: { messages: { some: { messageId } } } } }),
    );
    return { token, messageId, threadId, entityId: ingested.entityId!, draft };
  }

  async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    return page;
  }

  async function logIn(page: Page, path = '/drafts'): Promise<void> {
    await page.goto(`${server.url}${path}`);
    await page.getByLabel('Operator password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${server.url}${path}`);
    for (const cookie of await page.context().cookies()) if (cookie.name === 'sa_session') sessionIds.add(cookie.value);
  }

  async function operatorPage(path = '/drafts'): Promise<Page> {
    const page = await newPage();
    await logIn(page, path);
    return page;
  }

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true });
    llm = await startScriptedLlmServer();
    llm.setFallback((request) => {
      if (request.schemaName === 'thread_promotion') {
        const prompt = userPrompt(request);
        const scripted = [...promotionScripts].find(([token]) => prompt.includes(token))?.[1];
        return { kind: 'json', content: { topic: 'billing', facts: scripted?.facts ?? [], commitments: scripted?.commitments ?? [] } };
      }
      const token = caseOf(request) ?? 'case-unknown';
      const script = scripts.get(token) ?? {};
      return {
        kind: 'json',
        content: {
          reply: {
            body: script.body ?? `Hello, thanks for writing about ${token}. We are looking into it.`,
            needsHuman: script.needsHuman ?? false,
          },
          summary: script.summary ?? `Customer asks about a double charge (${token}).`,
          openItems: script.openItems ?? [`check the invoice for ${token}`],
          currentIntent: 'billing_question',
          tags: script.tags ?? ['billing'],
          pin: script.pin ?? [],
          unpin: [],
          resolved: false,
        },
      };
    });
    sink = await startSmtpSink();
    const config = loadConfig({
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX,
      SUPPORT_ADDRESS: SUPPORT,
      LLM_PROVIDER: 'openai',
      OPENAI_API_KEY: 'test-key',
      OPENAI_BASE_URL: llm.url,
      REPLY_MODE: 'draft',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(sink.port),
      CONSOLE_PASSWORD: PASSWORD,
      RECONCILE_INTERVAL: '1h',
      // The tests' customers all write the same text; the loop guard has tests of its own.
      LOOP_MAX_REPLIES: '1000',
    });
    // Everything at trace and unmasked, to prove the console itself never logs the secrets.
    const logger = createLogger('console-test', { level: 'trace', write: (line) => logLines.push(line) });
    runtime = await openRuntime(config, logger, { longRunning: true });
    workers = await startWorkers(runtime);
    server = await startConsole(runtime, { port: 0 });
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await server?.close();
    await workers?.close();
    await runtime?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${QUEUE_PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await db?.drop();
    await llm?.close();
    await sink?.close();
  }, 60_000);

  it('listens on the port it was given (0 picks a free one) and on loopback', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url.endsWith(':0')).toBe(false);
  });

  it('refuses a wrong password and lets the operator in with the right one', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/drafts`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await screenshot(page, 'console-login');

    await page.getByLabel('Operator password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    expect(await textOf(page.getByRole('alert'))).toBe('That password is not correct.');
    expect(new URL(page.url()).pathname).toBe('/login');
    expect((await page.context().cookies()).some((c) => c.name === 'sa_session')).toBe(false);

    await page.getByLabel('Operator password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${server.url}/drafts`);
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Drafts to review');
    const session = (await page.context().cookies()).find((c) => c.name === 'sa_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    sessionIds.add(session!.value);

    await page.getByRole('button', { name: 'Log out' }).click();
    expect(await textOf(page.getByRole('status'))).toBe('You are logged out.');
    await page.goto(`${server.url}/drafts`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });

  it('approving a draft sends it once through the outbox; a human-flagged draft stands out and can be approved', async () => {
    const alice = await customerWrites({ from: 'Alice Example <alice@example.net>' });
    const bob = await customerWrites({
      from: 'Bob <bob@example.org>',
      subject: 'Cancel everything',
      script: { needsHuman: true, body: 'I need a person to check this cancellation.' },
    });
    const page = await operatorPage();
    const stale = await operatorPage();

    // Newest first, and the human-flagged draft is marked in words, not only colour.
    const order = await page.locator('article.card').evaluateAll((els) => els.map((e) => e.id));
    expect(order.indexOf(`draft-${bob.draft.id}`)).toBeLessThan(order.indexOf(`draft-${alice.draft.id}`));
    const bobCard = page.locator(`#draft-${bob.draft.id}`);
    expect(await bobCard.getAttribute('class')).toMatch(/needs-human/);
    await visible(bobCard.getByText('Needs a human'));
    const aliceCard = page.locator(`#draft-${alice.draft.id}`);
    await visible(aliceCard.getByText(`Customer asks about a double charge (${alice.token}).`));
    await visible(aliceCard.getByText(`check the invoice for ${alice.token}`));
    await visible(aliceCard.getByRole('link', { name: 'Alice Example <alice@example.net>' }));
    await screenshot(page, 'console-drafts');

    await aliceCard.getByRole('button', { name: 'Approve and send' }).click();
    expect(await textOf(page.getByRole('status'))).toBe('Approved. The reply is queued and the worker will send it.');
    const [sent] = await sink.waitForMessages(1);
    expect(sent!.envelope.to).toEqual(['alice@example.net']);
    expect(sent!.text).toContain(`Hello, thanks for writing about ${alice.token}.`);
    expect(sent!.headers.get('in-reply-to')).toBe(alice.messageId);
    await waitFor(
      'the draft to be recorded as sent',
      async () => (await runtime.db.draft.findUnique({ where: { id: alice.draft.id } }))?.status === 'sent',
    );

    // A second click from a page loaded before the first approval changes nothing.
    await stale.locator(`#draft-${alice.draft.id}`).getByRole('button', { name: 'Approve and send' }).click();
    expect(await textOf(stale.getByRole('status'))).toMatch(/already been handled/);

    // The human decides: the flagged draft is approved from the keyboard.
    await page.goto(`${server.url}/drafts`);
    await page.locator(`#draft-${bob.draft.id}`).getByRole('button', { name: 'Approve and send' }).focus();
    await page.keyboard.press('Enter');
    expect(await textOf(page.getByRole('status'))).toMatch(/Approved/);
    const all = await sink.waitForMessages(2);
    expect(all[1]!.envelope.to).toEqual(['bob@example.org']);
    await waitFor(
      'the flagged draft to be sent',
      async () => (await runtime.db.draft.findUnique({ where: { id: bob.draft.id } }))?.status === 'sent',
    );
    expect(sink.messages.filter((m) => m.messageId === alice.draft.messageId)).toHaveLength(1);
  }, 60_000);

  it('a draft card shows who the reply is copied to, escaped', async () => {
    const dan = await customerWrites({ from: 'dan@example.net' });
    await runtime.db.draft.update({ where: { id: dan.draft.id }, data: { ccAddresses: ['erin@example.net', '<b>x</b>@example.net'] } });
    const page = await operatorPage();
    const card = page.locator(`#draft-${dan.draft.id}`);
    expect(await textOf(card.locator('.draft-cc'))).toBe('Cc erin@example.net, <b>x</b>@example.net');
    expect(await card.locator('.draft-cc b').count()).toBe(0);
  });

  it('edit then send sends the edited body', async () => {
    const carol = await customerWrites({ from: 'carol@example.com' });
    const before = sink.messages.length;
    const page = await operatorPage();
    const card = page.locator(`#draft-${carol.draft.id}`);
    await card.getByText('Edit before sending').click();
    const edited = 'Hi Carol,\n\nA person checked this: the second charge is refunded today.\n\nBest,\nSupport';
    await card.getByLabel('Reply to carol@example.com').fill(edited);
    await card.getByRole('button', { name: 'Save and send' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/edited reply is queued/);

    const received = await sink.waitForMessages(before + 1);
    const mail = received.at(-1)!;
    expect(mail.envelope.to).toEqual(['carol@example.com']);
    // The edited text, then the answered message quoted below it (REPLY_QUOTE_ORIGINAL).
    const [reply, quoted] = mail.text.split(/\n\nOn [^\n]+ wrote:\n/);
    expect(reply!.trim()).toBe(edited);
    expect(quoted).toMatch(/^> Hello, I was charged twice/);
    const stored = await runtime.db.draft.findUniqueOrThrow({ where: { id: carol.draft.id } });
    expect(stored.body).toBe(edited);
    const outbound = await runtime.db.message.findFirstOrThrow({ where: { messageId: stored.messageId } });
    expect(outbound.bodyText).toBe(edited);
    expect(outbound.extractedText).toBe(edited);
  }, 60_000);

  it('discarding a draft sends nothing and takes it off the review list', async () => {
    const dave = await customerWrites({ from: 'dave@example.com' });
    const page = await operatorPage();
    await page.locator(`#draft-${dave.draft.id}`).getByRole('button', { name: 'Discard' }).click();
    expect(await textOf(page.getByRole('status'))).toBe('Discarded the draft. Nothing was sent.');
    expect(await page.locator(`#draft-${dave.draft.id}`).count()).toBe(0);
    expect(await textOf(page.locator(`#handled-${dave.draft.id}`))).toContain('discarded');
    const stored = await runtime.db.draft.findUniqueOrThrow({ where: { id: dave.draft.id } });
    expect(stored.status).toBe('discarded');
    expect((await runtime.db.message.findFirstOrThrow({ where: { messageId: stored.messageId } })).status).toBe('discarded');
    const outboxJobs = await runtime.queues().outbox.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
    expect(outboxJobs.some((job) => (job.data as { draftId?: string }).draftId === dave.draft.id)).toBe(false);
    expect(sink.messages.some((m) => m.envelope.to.includes('dave@example.com'))).toBe(false);
  }, 60_000);

  it('filters drafts and threads by tag, and the thread page shows the pinned items and tags', async () => {
    const erin = await customerWrites({
      from: 'erin@example.com',
      subject: 'Parcel stuck',
      script: { tags: ['shipping', 'p0'], pin: ['PX-8820-0932'] },
    });
    const frank = await customerWrites({ from: 'frank@example.com' });
    const page = await operatorPage('/drafts?tag=shipping');
    expect(await page.locator(`#draft-${erin.draft.id}`).count()).toBe(1);
    expect(await page.locator(`#draft-${frank.draft.id}`).count()).toBe(0);
    expect(await textOf(page.getByRole('heading', { name: /Threads tagged shipping/ }))).toBe('Threads tagged shipping (1)');
    expect(await page.locator(`#tagged-${erin.threadId}`).count()).toBe(1);
    // A tag on a card leads to its filter; a made-up tag in the address filters to nothing, safely.
    await page.locator(`#draft-${erin.draft.id}`).getByRole('link', { name: 'p0' }).click();
    expect(new URL(page.url()).search).toBe('?tag=p0');
    await page.goto(`${server.url}/drafts?tag=${encodeURIComponent('<b>x')}`);
    expect(await page.getByRole('heading', { name: /Threads tagged/ }).count()).toBe(0);

    await page.goto(`${server.url}/threads/${erin.threadId}`);
    const state = page.locator('section[aria-labelledby="state-title"]');
    expect(await textOf(state)).toContain('PX-8820-0932');
    expect(await state.getByRole('link', { name: 'shipping' }).getAttribute('href')).toBe('/drafts?tag=shipping');
  }, 60_000);

  it('the thread page says why each profile fact was or was not in the last prompt', async () => {
    const first = await customerWrites({ from: 'hana@example.com', script: { tags: ['billing'] } });
    const fact = (key: string, value: string, extra: { tags?: string[]; expiresAt?: Date; origin?: string } = {}) => ({
      id: `f_${randomBytes(6).toString('hex')}`,
      entityId: first.entityId,
      key,
      value,
      category: 'other',
      confidence: 0.9,
      origin: extra.origin ?? 'email',
      tags: extra.tags ?? [],
      expiresAt: extra.expiresAt ?? null,
      validFrom: new Date(),
    });
    await runtime.db.profileFact.createMany({
      data: [
        fact('billing_contact', 'accounts payable <b>team</b>', { tags: ['billing'] }),
        fact('office_dog', 'Biscuit', { tags: ['design'] }),
        fact('old_issue', 'a stale remark', { expiresAt: new Date(Date.now() + 1000) }),
        fact('contract_id', 'K-5531', { origin: 'operator' }),
      ],
    });
    // The fact expires before the next turn reads the profile (the sweep has not run yet).
    await runtime.db.profileFact.updateMany({
      where: { entityId: first.entityId, key: 'old_issue' },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    // The customer answers in the same thread: its turn orders the profile by the thread's tags.
    const second = await customerWrites({ from: 'hana@example.com', inReplyTo: first.draft.messageId, script: { tags: ['billing'] } });
    expect(second.threadId).toBe(first.threadId);
    const page = await operatorPage(`/threads/${second.threadId}`);
    const state = page.locator('section[aria-labelledby="state-title"]');
    const row = (key: string) => state.locator('tr.fact-trace-row', { hasText: key });
    expect(await textOf(row('billing_contact'))).toMatch(/included.*tag overlap billing/);
    // Mail-borne text in a fact is shown literally.
    expect(await textOf(row('billing_contact'))).toContain('accounts payable <b>team</b>');
    expect(await textOf(row('office_dog'))).toMatch(/included.*no tag shared with this thread/);
    expect(await textOf(row('contract_id'))).toMatch(/set by an operator/);
    expect(await textOf(row('old_issue'))).toMatch(/left-out\s*left out: expired/);
    expect(await textOf(state)).toMatch(/Tags the last turn ordered them by:\s*billing/);
    await screenshot(page, 'console-fact-trace');
  }, 60_000);

  it('shows sends whose outcome is unknown and threads handed to a person, and lets the operator settle them', async () => {
    const fay = await customerWrites({ from: 'Fay <fay@example.com>' });
    const gus = await customerWrites({ from: 'Gus <gus@example.com>' });
    // As the reconciler leaves them: a send that lost its outcome, a thread the loop guard handed over.
    await runtime.db.draft.update({
      where: { id: fay.draft.id },
      data: { status: 'send_unknown', needsHuman: true, error: 'the send was claimed but its outcome was never recorded' },
    });
    await runtime.db.thread.update({
      where: { id: gus.threadId },
      data: { handoffAt: new Date(), handoffReason: 'suspected mail loop: 3 replies in a row to this address' },
    });
    const before = sink.messages.length;

    const page = await operatorPage();
    const unknown = page.locator(`#unknown-${fay.draft.id}`);
    await visible(unknown);
    await visible(page.locator(`#handoff-${gus.threadId}`).getByText('suspected mail loop'));
    await screenshot(page, 'console-attention');

    await unknown.getByRole('button', { name: 'It arrived: record as sent' }).click();
    expect(await textOf(page.getByRole('status'))).toBe('Recorded as sent. Nothing was sent again.');
    expect((await runtime.db.draft.findUniqueOrThrow({ where: { id: fay.draft.id } })).status).toBe('sent');
    expect(await page.locator(`#unknown-${fay.draft.id}`).count()).toBe(0);

    await page.locator(`#handoff-${gus.threadId}`).getByRole('button', { name: 'I have taken it over' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/The thread is yours/);
    expect((await runtime.db.thread.findUniqueOrThrow({ where: { id: gus.threadId } })).handoffAt).toBeNull();
    expect(sink.messages.length).toBe(before);

    // The other way: it did not arrive, so it goes back to the outbox and is sent once.
    await runtime.db.draft.update({ where: { id: gus.draft.id }, data: { status: 'send_unknown', needsHuman: true } });
    await page.goto(`${server.url}/drafts`);
    await page.locator(`#unknown-${gus.draft.id}`).getByRole('button', { name: 'It did not arrive: send again' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/Back in the outbox/);
    await sink.waitForMessages(before + 1);
    await waitFor(
      'the resent draft to be sent',
      async () => (await runtime.db.draft.findUnique({ where: { id: gus.draft.id } }))?.status === 'sent',
    );
    expect(sink.messages.filter((m) => m.messageId === gus.draft.messageId)).toHaveLength(1);
  }, 60_000);

  it('an operator sets, corrects and deletes facts; a deleted fact is gone from the next prompt', async () => {
    const first = await customerWrites({ from: 'Erin <erin@example.com>' });
    const page = await operatorPage(`/customers/${first.entityId}`);
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Erin');

    // A protected key, which no email could ever set.
    await page.getByLabel('Key (snake_case)').fill('account_tier');
    await page.getByLabel('Value').fill('platinum-7731');
    await page.getByRole('button', { name: 'Set fact' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/Set the fact/);
    await visible(page.getByRole('heading', { name: 'account_tier: platinum-7731' }));

    await page.getByText('Set a fact (including protected facts)').click();
    await page.getByLabel('Key (snake_case)').fill('preferred_language');
    await page.getByLabel('Value').fill('French');
    await page.getByRole('button', { name: 'Set fact' }).click();
    await page.getByLabel('Correct preferred_language').fill('German');
    await page.getByRole('button', { name: 'Save correction' }).nth(1).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/Corrected the fact/);
    await visible(page.getByRole('heading', { name: 'preferred_language: German' }));
    expect(await page.getByRole('heading', { name: 'preferred_language: French' }).count()).toBe(0);
    await screenshot(page, 'console-profile');

    const withFact = await customerWrites({ from: 'Erin <erin@example.com>', subject: 'Upgrade question' });
    const promptWith = llm.requests.find((r) => caseOf(r) === withFact.token);
    expect(promptWith && fullPrompt(promptWith)).toContain('platinum-7731');

    await page.reload();
    const tierCard = page.locator('article', { has: page.getByRole('heading', { name: 'account_tier: platinum-7731' }) });
    await tierCard.getByRole('button', { name: 'Delete fact' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/Deleted the fact/);
    expect(await page.getByRole('heading', { name: 'account_tier: platinum-7731' }).count()).toBe(0);
    const trail = page.locator('section', { has: page.getByRole('heading', { name: /Decision trail/ }) });
    await visible(trail.getByText('operator-delete'));
    await visible(trail.getByText('operator-set').first());

    const afterDelete = await customerWrites({ from: 'Erin <erin@example.com>', subject: 'Another question' });
    const promptAfter = llm.requests.find((r) => caseOf(r) === afterDelete.token);
    expect(promptAfter).toBeDefined();
    expect(fullPrompt(promptAfter!)).not.toContain('platinum-7731');
    expect(fullPrompt(promptAfter!)).toContain('German');
  }, 90_000);

  it('Promote now runs a pass through the worker; the promise it records is listed, overdue, on the commitments page', async () => {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const first = await customerWrites({
      from: 'Farah <farah@example.com>',
      subject: 'Double charge',
      script: { body: 'Sorry about that. We will refund the duplicate charge by tomorrow.' },
    });
    promotionScripts.set(first.token, {
      commitments: [{ text: 'refund the duplicate charge', due: yesterday, sourceMessageId: first.draft.messageId }],
    });
    // No pass yet: the thread is active, its periodic pass is a day away.
    expect(await runtime.db.promotionRun.count({ where: { threadId: first.threadId } })).toBe(0);

    const page = await operatorPage(`/threads/${first.threadId}`);
    await page.getByRole('button', { name: 'Promote now' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/Promotion queued/);
    const run = await waitFor('the operator pass', () =>
      runtime.db.promotionRun.findFirst({ where: { threadId: first.threadId, trigger: 'operator' } }),
    );
    expect(run.coveredMessageIds).toEqual([first.messageId]);
    await waitFor('the commitment', () => runtime.db.commitment.findFirst({ where: { threadId: first.threadId } }));

    await page.goto(`${server.url}/commitments?show=overdue`);
    const row = page.locator('tr', { has: page.getByText('refund the duplicate charge') });
    await visible(row);
    expect(await textOf(row)).toMatch(/overdue/);
    expect(await textOf(row)).toContain('farah@example.com');
    await screenshot(page, 'console-commitments');

    // The customer's page has the same button for all their threads.
    await page.goto(`${server.url}/customers/${first.entityId}`);
    await visible(page.locator('section', { has: page.getByRole('heading', { name: /Commitments \(1 outstanding\)/ }) }));
    await page.getByRole('button', { name: 'Promote now' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/Promotion queued/);
  }, 90_000);

  it('links another address from the customer page, merging the profile it had', async () => {
    const main = await customerWrites({ from: 'Gita <gita@example.com>', subject: 'Export question' });
    const other = await customerWrites({ from: 'Gita Private <gita.private@gmail.com>', subject: 'Another question' });
    expect(other.entityId).not.toBe(main.entityId);
    const page = await operatorPage(`/customers/${main.entityId}`);
    await page.getByText('Link another address of this customer').click();
    await page.getByLabel('Email address').fill('Gita.Private@gmail.com');
    await page.getByRole('button', { name: 'Link address' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/Linked the address/);
    expect(await textOf(page.getByText(/^Addresses:/))).toBe('Addresses: gita.private@gmail.com, gita@example.com');
    expect(await runtime.db.entity.findUnique({ where: { id: other.entityId } })).toBeNull();
    expect(await runtime.db.thread.count({ where: { entityId: main.entityId } })).toBe(2);

    await page.getByText('Link another address of this customer').click();
    await page.getByLabel('Email address').evaluate((input) => input.setAttribute('type', 'text'));
    await page.getByLabel('Email address').fill('not an address');
    await page.getByRole('button', { name: 'Link address' }).click();
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('That did not work');
    expect(await textOf(page.locator('main'))).toContain('"not an address" is not an email address');
  }, 90_000);

  it('mail containing <script> is shown literally and never runs', async () => {
    const hostileText = `Hi <script>window.__pwned = 1; alert('body')</script> please <img src=x onerror="window.__pwned=2"> help`;
    const mallory = await customerWrites({
      from: '"<img src=x onerror=alert(1)>" <mallory@example.net>',
      subject: '<script>alert("subject")</script>',
      text: hostileText,
      script: {
        body: '<script>window.__pwned = 3</script>Thanks, we will check.',
        summary: '<img src=x onerror="window.__pwned=4"> summary',
        openItems: ['<script>alert(5)</script>'],
        tags: ['<b>bold</b>'],
      },
    });
    const page = await operatorPage();
    const pages = [
      `/drafts`,
      `/threads/${mallory.threadId}`,
      `/customers/${mallory.entityId}`,
      `/messages/${(await runtime.db.message.findFirstOrThrow({ where: { messageId: mallory.messageId } })).id}/original`,
    ];
    for (const path of pages) {
      const response = await page.goto(`${server.url}${path}`);
      const csp = response!.headers()['content-security-policy'] ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain('unsafe-inline');
      if (path.startsWith('/customers/')) {
        const entity = await runtime.db.entity.findUniqueOrThrow({ where: { id: mallory.entityId } });
        expect(entity.name).toContain('<img');
        expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe(entity.name);
      } else {
        await visible(page.getByText("<script>window.__pwned = 1; alert('body')</script>"));
      }
      expect(await page.evaluate("'__pwned' in window")).toBe(false);
      expect(await page.locator('script').count()).toBe(0);
      expect(await page.locator('img').count()).toBe(0);
      expect(dialogs).toEqual([]);
      if (path.startsWith('/messages/')) await screenshot(page, 'console-original-message');
      if (path.startsWith('/threads/')) {
        await visible(page.getByText('<img src=x onerror="window.__pwned=4"> summary'));
        await visible(page.getByText('<script>alert(5)</script>'));
        await screenshot(page, 'console-thread');
      }
    }
  }, 60_000);

  it('lists skipped mail with its reason, filters by reason, and shows the raw source literally', async () => {
    const token = newCase();
    const autoReply = Buffer.concat([
      Buffer.from('Auto-Submitted: auto-replied\r\n'),
      eml({
        from: 'Ivan <ivan@example.org>',
        subject: `Out of office <script>alert("skip")</script> [${token}]`,
        body: `I am away <script>window.__pwned = 7</script> until Monday <img src=x onerror="window.__pwned=8">`,
        messageId: `<away-${token}@example.org>`,
      }),
    ]);
    const listMail = Buffer.concat([
      Buffer.from(`List-Id: Weekly news <news-${token}.example.org>\r\n`),
      eml({
        from: 'news@example.org',
        subject: `Our weekly news [${token}]`,
        body: 'Read all about it.',
        messageId: `<news-${token}@example.org>`,
      }),
    ]);
    for (const raw of [autoReply, listMail]) {
      expect((await ingestRawMessage(runtime.ingestDeps({ logger: silentLogger }), raw, { kind: 'api' })).outcome).toBe('skipped');
    }
    const autoRow = (page: Page) => page.getByRole('row').filter({ hasText: `Out of office <script>alert("skip")</script> [${token}]` });
    const listRow = (page: Page) => page.getByRole('row').filter({ hasText: `Our weekly news [${token}]` });

    const page = await operatorPage('/drafts');
    await page.getByRole('link', { name: 'Skipped mail' }).click();
    await page.waitForURL(`${server.url}/skipped`);
    await visible(page.getByRole('heading', { level: 1, name: 'Skipped mail' }));
    expect(await textOf(autoRow(page).getByRole('cell').nth(3))).toMatch(/^auto-reply an out-of-office .*\s+Auto-Submitted: auto-replied/);
    expect(await textOf(listRow(page).getByRole('cell').nth(3))).toMatch(/^mailing-list list or bulk mail\s+List-Id present/);
    expect(await textOf(autoRow(page).getByRole('cell').nth(1))).toBe('Ivan <ivan@example.org>');

    await page
      .getByRole('navigation', { name: 'Filter by reason' })
      .getByRole('link', { name: /^auto-reply \(\d+\)$/ })
      .click();
    await page.waitForURL(`${server.url}/skipped?reason=auto-reply`);
    await visible(autoRow(page));
    expect(await listRow(page).count()).toBe(0);
    await screenshot(page, 'console-skipped-mail');

    await autoRow(page)
      .getByRole('link', { name: /Raw source/ })
      .click();
    await page.waitForURL(/\/messages\/[^/]+\/original$/);
    const source = await textOf(page.locator('pre.mail'));
    expect(source).toContain('Auto-Submitted: auto-replied');
    expect(source).toContain('I am away <script>window.__pwned = 7</script> until Monday <img src=x onerror="window.__pwned=8">');
    expect(await page.evaluate("'__pwned' in window")).toBe(false);
    expect(await page.locator('script').count()).toBe(0);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);

    const { cookie } = await fetchLogin(server.url);
    const bogus = await fetch(`${server.url}/skipped?reason=bogus`, { headers: { cookie } });
    expect(bogus.status).toBe(400);
    const anonymous = await fetch(`${server.url}/skipped`, { redirect: 'manual' });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain(token);
  }, 60_000);

  it('a POST without the CSRF token is refused, and the login form has its own token', async () => {
    const frank = await customerWrites({ from: 'frank@example.com' });
    const loginPage = await fetch(`${server.url}/login`);
    const loginCookie = loginPage.headers.getSetCookie()[0]!.split(';')[0]!;
    const loginToken = /name="_login" value="([^"]+)"/.exec(await loginPage.text())![1]!;

    const noLoginToken = await fetch(`${server.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: loginCookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: PASSWORD, _login: '' }),
    });
    expect(noLoginToken.status).toBe(403);

    const login = await fetch(`${server.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: loginCookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: PASSWORD, _login: loginToken }),
    });
    expect(login.status).toBe(303);
    const setCookie = login.headers.getSetCookie().find((c) => c.startsWith('sa_session='))!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    const session = setCookie.split(';')[0]!;
    sessionIds.add(session.slice('sa_session='.length));

    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/drafts/${frank.draft.id}/discard`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields),
      });
    expect((await post({ from: 'drafts' })).status).toBe(403);
    expect((await post({ from: 'drafts', _csrf: 'forged' })).status).toBe(403);
    const json = await fetch(`${server.url}/drafts/${frank.draft.id}/discard`, {
      method: 'POST',
      headers: { cookie: session, 'content-type': 'application/json' },
      body: JSON.stringify({ _csrf: 'anything' }),
    });
    expect(json.status).toBe(403);
    const anonymous = await fetch(`${server.url}/drafts/${frank.draft.id}/discard`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ from: 'drafts' }),
    });
    expect(anonymous.status).toBe(401);
    expect((await runtime.db.draft.findUniqueOrThrow({ where: { id: frank.draft.id } })).status).toBe('draft');

    // The page's own token, and only from this origin, is what makes the same request work.
    const drafts = await (await fetch(`${server.url}/drafts`, { headers: { cookie: session } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(drafts)![1]!;
    expect((await post({ from: 'drafts', _csrf: csrf }, { origin: 'http://evil.example' })).status).toBe(403);
    const ok = await post({ from: 'drafts', _csrf: csrf });
    expect(ok.status).toBe(303);
    expect((await runtime.db.draft.findUniqueOrThrow({ where: { id: frank.draft.id } })).status).toBe('discarded');
  }, 60_000);

  it('erasing a customer needs a typed confirmation', async () => {
    const grace = await customerWrites({ from: 'Grace <grace@example.com>' });
    const page = await operatorPage(`/customers/${grace.entityId}`);
    await page.getByRole('link', { name: 'Erase this customer…' }).click();
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Erase Grace?');
    await screenshot(page, 'console-erase');

    await page.getByLabel(/To confirm, type the customer's key/).fill('someone-else@example.com');
    await page.getByRole('button', { name: 'Erase permanently' }).click();
    expect(await textOf(page.getByRole('alert'))).toMatch(/did not match/);
    expect(await runtime.db.entity.count({ where: { id: grace.entityId } })).toBe(1);

    await page.getByLabel(/To confirm, type the customer's key/).fill('grace@example.com');
    await page.getByRole('button', { name: 'Erase permanently' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/Erased the customer/);
    // What changed, as counts (never the erased values): the same summary as `support-agent erase`.
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe(`Erased ${grace.entityId}`);
    expect(await textOf(page.getByRole('row', { name: /^EntityAddress 1$/ }))).toMatch(/^EntityAddress\s+1$/);
    expect(await page.content()).not.toContain('grace@example.com');
    await screenshot(page, 'console-customers');
    expect(await runtime.db.entity.count({ where: { id: grace.entityId } })).toBe(0);
    expect(await runtime.db.thread.count({ where: { id: grace.threadId } })).toBe(0);
    const gone = await page.goto(`${server.url}/customers/${grace.entityId}`);
    expect(gone!.status()).toBe(404);
  }, 60_000);

  it('quality shows the drafts by outcome, overall and per intent', async () => {
    const page = await operatorPage('/quality');
    const discarded = await runtime.db.draft.count({ where: { outcome: 'discarded' } });
    const all = await runtime.db.draft.count();
    expect(discarded).toBeGreaterThan(0);
    const row = page.getByRole('row', { name: /^All drafts/ });
    await visible(row);
    const cells = await row.getByRole('cell').allTextContents();
    // Drafts, sent as is, sent edited, replaced, discarded, ...
    expect(cells[0]).toBe(String(all));
    expect(cells[4]).toBe(String(discarded));
    await visible(page.getByRole('rowheader', { name: /^Intent: / }).first());
  }, 60_000);

  it('health shows queues, the poller per mailbox and token usage per day; Bull Board sits behind the login', async () => {
    await advanceCheckpoint(runtime.db, runtime.mailbox.id, 'INBOX', 1234n, 42);
    await recordPollerStatus(runtime.db, runtime.mailbox.id, { connected: false, lastError: 'IMAP_FAILED: connection refused' });
    const page = await operatorPage('/health');
    await visible(page.getByRole('rowheader', { name: 'turns' }));
    await visible(page.getByRole('rowheader', { name: 'outbox' }));
    await visible(page.getByText('last UID 42'));
    await visible(page.getByText('IMAP_FAILED: connection refused'));
    await visible(page.getByText('not connected'));
    const today = new Date().toISOString().slice(0, 10);
    await visible(page.getByRole('row', { name: new RegExp(`${today} message_turn`) }));
    await screenshot(page, 'console-health');

    const anonymous = await fetch(`${server.url}/health/queues/api/queues`);
    expect(anonymous.status).toBe(401);
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.getByRole('link', { name: 'Open Bull Board for job details' }).click();
    await page.waitForURL(`${server.url}/health/queues`);
    await visible(page.getByText('outbox'), 15_000);
    await page.getByText('Loading...').waitFor({ state: 'hidden', timeout: 15_000 });
    // Its own scripts run under the policy; only its stylesheet from Google Fonts is (deliberately) blocked.
    expect(consoleErrors.filter((e) => !e.includes('fonts.googleapis.com'))).toEqual([]);
    await screenshot(page, 'console-bull-board');
  }, 60_000);

  it('without SMTP configured, approving explains why instead of queuing the reply', async () => {
    const ivan = await customerWrites({ from: 'ivan@example.com' });
    // Sending is each mailbox's setting (MAILBOXES_FILE); the variables' mailbox is the one here.
    const withoutSmtp: Runtime = {
      ...runtime,
      config: { ...runtime.config, smtp: { ...runtime.config.smtp, host: undefined } },
      mailboxes: runtime.mailboxes.map((m) => ({ ...m, settings: { ...m.settings, smtp: { ...m.settings.smtp, host: undefined } } })),
    };
    const second = await startConsole(withoutSmtp, { port: 0 });
    try {
      const { cookie, csrf } = await fetchLogin(second.url);
      sessionIds.add(cookie.slice('sa_session='.length));
      const page = await (await fetch(`${second.url}/drafts`, { headers: { cookie } })).text();
      expect(page).toContain('Sending is not configured (SMTP_HOST is not set)');
      const approve = await fetch(`${second.url}/drafts/${ivan.draft.id}/approve`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf, from: 'drafts' }),
      });
      expect(approve.status).toBe(303);
      expect(approve.headers.get('location')).toBe('/drafts?notice=smtp-missing');
      expect((await runtime.db.draft.findUniqueOrThrow({ where: { id: ivan.draft.id } })).status).toBe('draft');
    } finally {
      await second.close();
    }
  }, 60_000);

  it('is usable on a narrow screen and from the keyboard', async () => {
    await customerWrites({ from: 'heidi@example.com' });
    const page = await newPage({ width: 375, height: 800 });
    await logIn(page);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'console-drafts-narrow', { fullPage: false });
  }, 60_000);

  it('never logs the password or a session id', () => {
    expect(sessionIds.size).toBeGreaterThan(0);
    const log = logLines.join('\n');
    expect(log).toContain('console login');
    expect(log).not.toContain(PASSWORD);
    for (const id of sessionIds) expect(log).not.toContain(id);
  });
});
