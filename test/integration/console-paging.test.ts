// The drafts list beyond one page, its filters, send buttons without SMTP, superseded vs discarded
// labels, human sizes and the Quality page by mail date: real PostgreSQL, Redis and workers, the
// scripted model through the real `openai` client, 56 customer mails of a replayed 2024 history
// through the real ingestion and turn path, and headless Chromium clicking as an operator would.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/app/runtime.ts';
import { startConsole, type RunningConsole } from '../../src/console/server.ts';
import { customerEmail, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';
import { launchBrowser, screenshot, textOf, visible } from '../support/browser.ts';
import type { RecordedRequest } from '../support/scripted-llm-server.ts';

const PASSWORD = 'correct horse battery staple';
const CUSTOMERS = 55;
/** Every third customer's mail asks for a person (the scripted model flags its draft). */
const FLAGGED = Array.from({ length: CUSTOMERS }, (_, i) => i).filter((i) => i % 3 === 0).length;
/** The replayed history: one mail an hour from this date. */
const HISTORY_START = Date.UTC(2024, 2, 1, 8, 0, 0);

function latestEmail(request: RecordedRequest): string {
  const prompt = request.body.messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
  return prompt.slice(prompt.lastIndexOf('NEW EMAIL TO ANSWER'));
}

describe('the console drafts list: pages, filters, send without SMTP, labels, sizes, quality by mail date', () => {
  let h: AgentHarness;
  let server: RunningConsole;
  let noSmtp: RunningConsole;
  let browser: Browser;
  let supersededId: string;

  async function operatorPage(base: string, path: string): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${base}${path}`);
    await page.getByLabel('Operator password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${base}${path}`);
    return page;
  }

  async function drafted(count: number): Promise<void> {
    await waitFor(
      () => h.runtime.db.draft.count(),
      (n) => n >= count,
      60_000,
      `${count} drafts`,
    );
  }

  beforeAll(async () => {
    h = await startAgentHarness({
      REPLY_MODE: 'draft',
      CONSOLE_PASSWORD: PASSWORD,
      // A replayed 2024 history: answered although older than a week.
      REPLY_MAX_AGE: '3650d',
    });
    h.llm.setFallback((request) =>
      request.schemaName === 'thread_promotion'
        ? { kind: 'json', content: { topic: 'billing', facts: [], commitments: [] } }
        : { kind: 'json', content: turnAnswer({ needsHuman: latestEmail(request).includes('PLEASE-A-PERSON') }) },
    );
    for (let i = 0; i < CUSTOMERS; i++) {
      const ingested = await h.ingest(
        customerEmail({
          from: `customer${i}@example.com`,
          subject: `Question ${i}`,
          body: `Hello, question number ${i}.${i % 3 === 0 ? ' PLEASE-A-PERSON' : ''}`,
          messageId: `<q${i}@example.com>`,
          date: new Date(HISTORY_START + i * 3_600_000),
        }),
      );
      expect(ingested.outcome).toBe('processed');
    }
    await drafted(CUSTOMERS);
    // The first customer writes again: the agent's newer draft supersedes the one waiting.
    supersededId = (await h.runtime.db.draft.findFirstOrThrow({ where: { toAddress: 'customer1@example.com' } })).id;
    await h.ingest(
      customerEmail({
        from: 'customer1@example.com',
        subject: 'Re: Question 1',
        body: 'One more thing.',
        inReplyTo: '<q1@example.com>',
        references: '<q1@example.com>',
        date: new Date(HISTORY_START + CUSTOMERS * 3_600_000),
      }),
    );
    await drafted(CUSTOMERS + 1);
    server = await startConsole(h.runtime, { port: 0 });
    // Sending is each mailbox's setting; this console's mailbox has none.
    const withoutSmtp: Runtime = {
      ...h.runtime,
      config: { ...h.runtime.config, smtp: { ...h.runtime.config.smtp, host: undefined } },
      mailboxes: h.runtime.mailboxes.map((m) => ({ ...m, settings: { ...m.settings, smtp: { ...m.settings.smtp, host: undefined } } })),
    };
    noSmtp = await startConsole(withoutSmtp, { port: 0 });
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await noSmtp?.close();
    await h?.close();
  }, 60_000);

  it('pages the waiting drafts 50 at a time; Next and Previous reach every one', async () => {
    const page = await operatorPage(server.url, '/drafts');
    expect(await textOf(page.locator('#draft-count'))).toBe(`${CUSTOMERS} drafts waiting, newest first.`);
    expect(await page.locator('article.card').count()).toBe(50);
    expect(await textOf(page.locator('nav.pager'))).toContain(`Page 1 of 2 · drafts 1–50 of ${CUSTOMERS}`);
    const firstPage = await page.locator('article.card').evaluateAll((cards) => cards.map((c) => c.id));
    await page.locator('nav.pager').first().getByRole('link', { name: 'Next' }).click();
    await page.waitForURL(`${server.url}/drafts?page=2`);
    const secondPage = await page.locator('article.card').evaluateAll((cards) => cards.map((c) => c.id));
    expect(secondPage).toHaveLength(CUSTOMERS - 50);
    expect(await page.locator('nav.pager').getByRole('link', { name: 'Next' }).count()).toBe(0);
    const waiting = await h.runtime.db.draft.findMany({ where: { status: 'draft' }, select: { id: true } });
    expect(new Set([...firstPage, ...secondPage])).toEqual(new Set(waiting.map((d) => `draft-${d.id}`)));
    await screenshot(page, 'console-drafts-page-2');
    await page.locator('nav.pager').first().getByRole('link', { name: 'Previous' }).click();
    await page.waitForURL(`${server.url}/drafts`);
    expect(await page.locator('article.card').count()).toBe(50);
    // A page past the end shows nothing and leads back; a malformed one is page 1.
    await page.goto(`${server.url}/drafts?page=9`);
    expect(await page.locator('article.card').count()).toBe(0);
    expect(await page.locator('nav.pager').getByRole('link', { name: 'Previous' }).getAttribute('href')).toBe('/drafts?page=2');
    await page.goto(`${server.url}/drafts?page=-1`);
    expect(await page.locator('article.card').count()).toBe(50);
    await page.context().close();
  }, 60_000);

  it('filters by needs a person and by status; the pager keeps the filters', async () => {
    const page = await operatorPage(server.url, '/drafts');
    await page.getByLabel('Needs a person only').check();
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(`${server.url}/drafts?status=pending&human=1`);
    expect(await page.locator('article.card').count()).toBe(FLAGGED);
    expect(await page.locator('article.card.needs-human').count()).toBe(FLAGGED);
    expect(await textOf(page.locator('#draft-count'))).toBe(`${FLAGGED} drafts needing a person waiting, newest first.`);
    // Handled drafts: the superseded one, labelled as such.
    await page.getByLabel('Status').selectOption('handled');
    await page.getByLabel('Needs a person only').uncheck();
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(`${server.url}/drafts?status=handled`);
    expect(await page.locator('article.card').count()).toBe(1);
    expect(await textOf(page.locator(`#draft-${supersededId} .badge`))).toBe('superseded by a newer draft');
    // All: waiting and handled together, paged with the status kept in the links.
    await page.goto(`${server.url}/drafts?status=all`);
    expect(await textOf(page.locator('#draft-count'))).toBe(`${CUSTOMERS + 1} drafts, newest first.`);
    expect(await page.locator('nav.pager').first().getByRole('link', { name: 'Next' }).getAttribute('href')).toBe(
      '/drafts?status=all&page=2',
    );
    await page.context().close();
  }, 60_000);

  it('tells a person’s discard from a supersession in the lists', async () => {
    const page = await operatorPage(server.url, '/drafts');
    const target = await h.runtime.db.draft.findFirstOrThrow({ where: { toAddress: 'customer2@example.com', status: 'draft' } });
    const card = page.locator(`#draft-${target.id}`);
    // Workers draft in parallel, so the early customer's draft is on one of the two pages.
    if ((await card.count()) === 0) await page.goto(`${server.url}/drafts?page=2`);
    await (await visible(card.getByRole('button', { name: 'Discard' }))).click();
    await page.waitForURL(`${server.url}/drafts?notice=discarded`);
    expect(await textOf(page.locator(`#handled-${target.id} .badge`))).toBe('discarded');
    expect(await textOf(page.locator(`#handled-${supersededId} .badge`))).toBe('superseded by a newer draft');
    // Health counts them apart too.
    await page.goto(`${server.url}/health`);
    const byStatus = await textOf(page.locator('section[aria-labelledby="outbox-title"] ul'));
    expect(byStatus.split('\n')).toEqual(expect.arrayContaining(['discarded: 1', 'superseded by a newer draft: 1']));
    await page.context().close();
  }, 60_000);

  it('without SMTP the send buttons are disabled with the reason beside them; Discard and Save still work', async () => {
    const page = await operatorPage(noSmtp.url, '/drafts');
    const card = page.locator('article.card').first();
    const approve = card.getByRole('button', { name: 'Approve and send' });
    expect(await approve.isDisabled()).toBe(true);
    await card.getByText('Edit before sending').click();
    expect(await card.getByRole('button', { name: 'Save and send' }).isDisabled()).toBe(true);
    expect(await card.getByRole('button', { name: 'Discard' }).isEnabled()).toBe(true);
    expect(await card.getByRole('button', { name: 'Save draft' }).isEnabled()).toBe(true);
    const reason = await textOf(card.locator('.send-disabled'));
    expect(reason).toContain('Sending is not configured');
    // The reason is the button's description for assistive technology.
    const describedBy = (await approve.getAttribute('aria-describedby'))!.split(' ');
    expect(await textOf(page.locator(`#${describedBy[1]!}`))).toBe(reason);
    await screenshot(page, 'console-drafts-no-smtp', { fullPage: false });
    // With SMTP the same buttons are active.
    const live = await operatorPage(server.url, '/drafts');
    expect(await live.locator('article.card').first().getByRole('button', { name: 'Approve and send' }).isEnabled()).toBe(true);
    expect(await live.locator('.send-disabled').count()).toBe(0);
    await live.context().close();
    // Saving an edit still works without SMTP.
    const id = (await card.getAttribute('id'))!.slice('draft-'.length);
    await card.getByRole('textbox').fill('Edited while sending is off.');
    await card.getByRole('button', { name: 'Save draft' }).click();
    await page.waitForURL(`${noSmtp.url}/drafts?notice=saved`);
    expect((await h.runtime.db.draft.findUniqueOrThrow({ where: { id } })).body).toBe('Edited while sending is off.');
    await page.context().close();
  }, 60_000);

  it('shows the raw mail size for people, the exact bytes on hover', async () => {
    const message = await h.runtime.db.message.findFirstOrThrow({ where: { messageId: '<q5@example.com>' }, include: { raw: true } });
    const bytes = message.raw!.raw.length;
    const page = await operatorPage(server.url, `/messages/${message.id}/original`);
    const size = page.locator('data.size').first();
    expect(await textOf(size)).toMatch(/^\d+ (B|KB)$/);
    expect(await size.getAttribute('value')).toBe(String(bytes));
    expect(await size.getAttribute('title')).toBe(`${bytes.toLocaleString('en-US')} bytes`);
    await page.context().close();
  }, 60_000);

  it('Quality counts the replayed history by its mail dates, ending at the newest mail', async () => {
    const page = await operatorPage(server.url, '/quality');
    const period = await textOf(page.locator('#quality-period'));
    // The history's newest mail (March 2024), not today, ends the period.
    expect(period).toContain('2024-03-03 15:00 UTC');
    expect(period).toContain('2024-02-02 15:00 UTC');
    const allDrafts = page.locator('tbody tr').first().locator('td').first();
    expect(await textOf(allDrafts)).toBe(String(CUSTOMERS + 1));
    // The last day of the history: the mails dated within 24 hours of the newest (hours 31..55).
    await page.goto(`${server.url}/quality?days=1`);
    expect(await textOf(page.locator('tbody tr').first().locator('td').first())).toBe('25');
    await page.context().close();
  }, 60_000);
});
