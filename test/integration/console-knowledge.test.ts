// The console's knowledge page and facts Import, end to end: real PostgreSQL, Redis (Bull Board),
// the scripted OpenAI-compatible server serving embeddings through the real `openai` client, HTTP
// for the hostile cases and headless Chromium for an operator's upload, search and removal.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime, type Runtime } from '../../src/app/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { startConsole, type RunningConsole } from '../../src/console/server.ts';
import { createLogger } from '../../src/logger.ts';
import { listKbDocuments, loadKbDocument, removeKbDocuments } from '../../src/store/knowledge.ts';
import { launchBrowser, screenshot, textOf, visible } from '../support/browser.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';

const PASSWORD = 'correct horse battery staple';
const REDIS_URL = 'redis://127.0.0.1:6379';
const QUEUE_PREFIX = `console-kb-test-${randomBytes(4).toString('hex')}`;
const UPLOAD_CAP = 64 * 1024;

const DARK_MODE = `---
title: Dark mode and themes
lang: en
tags: product
---
# Dark mode and themes

## Dark mode
Open Settings > Appearance and choose Dark. The choice is kept per browser.

## Feature requests
Write to support with what you would like to see.
`;

async function fetchLogin(baseUrl: string): Promise<{ cookie: string; csrf: string }> {
  const form = await fetch(`${baseUrl}/login`);
  const loginCookie = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const token = /name="_login" value="([^"]+)"/.exec(await form.text())![1]!;
  const login = await fetch(`${baseUrl}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: loginCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ password: PASSWORD, _login: token }),
  });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('sa_session='))
    ?.split(';')[0];
  if (!cookie) throw new Error(`login failed with status ${login.status}`);
  const page = await (await fetch(`${baseUrl}/knowledge`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page)![1]! };
}

describe('the console knowledge page and facts import', () => {
  let db: TestDatabase;
  let llm: ScriptedLlmServer;
  let runtime: Runtime;
  let server: RunningConsole;
  let browser: Browser;
  let session: { cookie: string; csrf: string };
  const logLines: string[] = [];

  async function upload(
    path: string,
    name: string,
    content: string | Uint8Array,
    fields: Record<string, string> = {},
    csrf = session.csrf,
  ) {
    const form = new FormData();
    if (csrf) form.set('_csrf', csrf);
    for (const [k, v] of Object.entries(fields)) form.set(k, v);
    form.set('file', new Blob([content]), name);
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { cookie: session.cookie },
      body: form,
      redirect: 'manual',
    });
    return { status: response.status, text: await response.text() };
  }

  async function operatorPage(path: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}${path}`);
    await page.getByLabel('Operator password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${server.url}${path}`);
    return page;
  }

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true });
    llm = await startScriptedLlmServer();
    const config = loadConfig({
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX,
      SUPPORT_ADDRESS: 'support@acme.example',
      LLM_PROVIDER: 'openai',
      OPENAI_API_KEY: 'sk-console-kb-key-0001',
      OPENAI_BASE_URL: llm.url,
      OPENAI_EMBEDDING_MODEL: 'scripted-embedding',
      OPENAI_MAX_RETRIES: '0',
      CONSOLE_PASSWORD: PASSWORD,
      CONSOLE_UPLOAD_MAX_BYTES: String(UPLOAD_CAP),
    });
    runtime = await openRuntime(config, createLogger('console-kb-test', { level: 'trace', write: (l) => logLines.push(l) }), {
      longRunning: true,
    });
    server = await startConsole(runtime, { port: 0 });
    browser = await launchBrowser();
    session = await fetchLogin(server.url);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await runtime?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${QUEUE_PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await db?.drop();
    await llm?.close();
  }, 60_000);

  it('an operator imports a file, reads its passages, tests retrieval and removes it (Chromium)', async () => {
    const page = await operatorPage('/knowledge');
    await visible(page.getByRole('heading', { name: 'Knowledge base', level: 1 }));
    expect(await textOf(page.locator('main'))).toContain('The knowledge base is empty');
    await page.getByLabel('File').setInputFiles({ name: 'dark-mode.md', mimeType: 'text/markdown', buffer: Buffer.from(DARK_MODE) });
    await page.getByLabel('Tags (comma-separated)').fill('ui, themes');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const result = await textOf(page.locator('#kb-import-result'));
    expect(result).toContain('Imported dark-mode.md (new).');
    expect(result).toContain('Embeddings (scripted-embedding): 2 passage(s) embedded.');
    expect(await textOf(page.locator('#kb-documents'))).toContain('dark-mode.md');
    expect(await textOf(page.locator('main'))).toContain('2 passage(s) embedded');

    await page.getByRole('link', { name: 'dark-mode.md' }).click();
    await visible(page.getByRole('heading', { name: 'Dark mode and themes', level: 1 }));
    expect(await textOf(page.locator('main'))).toContain('Open Settings > Appearance and choose Dark.');
    expect(await textOf(page.locator('main'))).toContain('product, ui, themes');
    await screenshot(page, 'console-knowledge-document');

    await page.goto(`${server.url}/knowledge`);
    await page.getByLabel("A customer's question").fill('Is there a night theme?');
    await page.getByRole('button', { name: 'Search' }).click();
    const table = await textOf(page.locator('#kb-results'));
    expect(table).toContain('fused order');
    expect(table).toContain('Dark mode and themes > Dark mode');
    expect(table).toMatch(/Meaning rank/);
    await screenshot(page, 'console-knowledge-search');
    await page.locator('#kb-results a').first().click();
    await page.waitForURL(/\/knowledge\/kb_[^#]+#passage-kp_/);

    await page.goto(`${server.url}/knowledge`);
    await page.getByRole('button', { name: 'Remove dark-mode.md' }).click();
    await page.waitForURL(`${server.url}/knowledge?notice=kb-removed`);
    expect(await textOf(page.locator('main'))).toContain('Removed the document and its passages.');
    expect(await listKbDocuments(runtime.db)).toEqual([]);
    await page.context().close();
  });

  it('refuses uploads without the form token, over the cap, of other kinds or empty; keeps only the file name', async () => {
    expect((await upload('/knowledge/import', 'a.md', DARK_MODE, {}, '')).status).toBe(403);
    const big = await upload('/knowledge/import', 'big.md', `# Big\n${'x'.repeat(UPLOAD_CAP + 70 * 1024)}`);
    expect(big.status).toBe(413);
    expect((await upload('/knowledge/import', 'tool.exe', 'MZ')).text).toContain('not a Markdown, HTML, text or PDF file');
    expect((await upload('/knowledge/import', 'empty.md', '')).status).toBe(400);
    // Just under the body cap but over the file cap: refused by the form, not stored.
    expect((await upload('/knowledge/import', 'near.md', `# Near\n${'y'.repeat(UPLOAD_CAP + 10)}`)).text).toContain('larger than');
    expect((await upload('/knowledge/import', 'a.md', DARK_MODE, { lang: 'english!' })).status).toBe(400);
    expect(await listKbDocuments(runtime.db)).toEqual([]);

    const sneaky = await upload('/knowledge/import', '../../etc/<b>notes</b>.md', DARK_MODE);
    expect(sneaky.status).toBe(200);
    // Only the last part of the name is kept (no folders), and shown escaped.
    expect((await listKbDocuments(runtime.db)).map((d) => d.source)).toEqual(['b>.md']);
    expect(sneaky.text).toContain('Imported b&gt;.md (new).');
    await removeKbDocuments(runtime.db, ['b>.md']);
  });

  it('escapes hostile document text, and re-importing the same file changes nothing', async () => {
    const hostile = `<html lang="en"><head><title>Help &lt;script&gt;</title></head><body><h1>Billing <img src=x onerror=alert(1)></h1><p>Pay by card.</p><script>alert(2)</script></body></html>`;
    const first = await upload('/knowledge/import', 'billing.html', hostile);
    expect(first.status).toBe(200);
    expect(first.text).toContain('Imported billing.html (new).');
    const again = await upload('/knowledge/import', 'billing.html', hostile);
    expect(again.text).toContain('billing.html is unchanged: nothing to do.');
    const doc = (await listKbDocuments(runtime.db)).find((d) => d.source === 'billing.html')!;
    const page = await (await fetch(`${server.url}/knowledge/${doc.id}`, { headers: { cookie: session.cookie } })).text();
    expect(page).not.toMatch(/<script>alert|<img src=x/);
    expect((await loadKbDocument(runtime.db, doc.id))?.passageList.map((p) => p.text).join(' ')).not.toContain('alert(2)');
  });

  it('an import whose embeddings fail still imports and says so; a search then falls back to lexical', async () => {
    llm.enqueueEmbeddings({ kind: 'status', status: 503 });
    const result = await upload(
      '/knowledge/import',
      'refunds.md',
      '# Refunds\n\n## Refund window\nYou can ask for a refund within 14 days.\n',
    );
    expect(result.status).toBe(200);
    expect(result.text).toContain('Imported refunds.md (new).');
    expect(result.text).toContain('Embeddings (scripted-embedding) failed after 0 passage(s)');
    expect(result.text).toContain('waiting</strong>');
    llm.enqueueEmbeddings({ kind: 'status', status: 503 });
    const search = await (await fetch(`${server.url}/knowledge?q=refund`, { headers: { cookie: session.cookie } })).text();
    expect(search).toContain('this is the lexical ranking only');
    expect(search).toContain('Refunds &gt; Refund window');
    expect(logLines.join('\n')).not.toContain('sk-console-kb-key-0001');
  });

  it('imports facts from an uploaded CSV or JSON through the same use case as `support-agent import`', async () => {
    const csv = 'email,account_tier,plan\nalice@example.com,premium,annual\nbob@example.com,basic,\n';
    const ok = await upload('/customers/import', 'crm.csv', csv);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('Imported 3 fact(s) for 2 customer(s) from crm.csv.');
    const alice = await runtime.db.entity.findFirstOrThrow({ where: { key: 'alice@example.com' } });
    const facts = await runtime.db.profileFact.findMany({ where: { entityId: alice.id, status: 'active' } });
    expect(facts.map((f) => [f.key, f.value, f.origin]).sort()).toEqual([
      ['account_tier', 'premium', 'import'],
      ['plan', 'annual', 'import'],
    ]);

    const json = await upload(
      '/customers/import',
      'crm.json',
      JSON.stringify([{ email: 'carol@example.com', facts: { plan: 'monthly' } }]),
    );
    expect(json.text).toContain('Imported 1 fact(s) for 1 customer(s) from crm.json.');

    const bad = await upload('/customers/import', 'bad.csv', 'email,Account Tier\ndave@example.com,gold\n');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Nothing was imported.');
    expect(bad.text).toContain('bad.csv: line 2');
    expect(await runtime.db.entity.findFirst({ where: { key: 'dave@example.com' } })).toBeNull();

    const notUtf8 = await upload('/customers/import', 'latin1.csv', new Uint8Array([0x65, 0x6d, 0x61, 0x69, 0x6c, 0x0a, 0xe9, 0xff]));
    expect(notUtf8.text).toContain('latin1.csv: not UTF-8 text');
    expect((await upload('/customers/import', 'x.csv', csv, {}, '')).status).toBe(403);
    expect((await upload('/customers/import', 'big.csv', `email\n${'a'.repeat(UPLOAD_CAP + 70 * 1024)}`)).status).toBe(413);
  });

  it('the Import button on a profile uploads in Chromium and shows the outcome', async () => {
    const alice = await runtime.db.entity.findFirstOrThrow({ where: { key: 'alice@example.com' } });
    const page = await operatorPage(`/customers/${alice.id}`);
    await page.getByText('Import facts from a file').click();
    await page.getByLabel('CSV or JSON file').setInputFiles({
      name: 'more.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('email,key,value\nalice@example.com,language,German\n'),
    });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    expect(await textOf(page.locator('#import-result'))).toContain('Imported 1 fact(s) for 1 customer(s) from more.csv.');
    await screenshot(page, 'console-import-facts');
    await page.goto(`${server.url}/customers/${alice.id}`);
    expect(await textOf(page.locator('#facts'))).toContain('language: German');
    await page.context().close();
  });
});
