/**
 * The local operator gets into the console without setting a password (issue 31: demo → console):
 * `support-agent console` on loopback without CONSOLE_PASSWORD prints a one-time link; it opens one
 * session in a real browser and is then spent; a wrong link opens nothing and leaves the right one
 * usable; anywhere but loopback, or from `start`, the console still demands CONSOLE_PASSWORD.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime, type Runtime } from '../../src/app/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { OneTimeLogin } from '../../src/console/one-time-login.ts';
import { startConsole, type RunningConsole } from '../../src/console/server.ts';
import { silentLogger } from '../../src/logger.ts';
import { launchBrowser, textOf } from '../support/browser.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

let db: TestDatabase;
let runtime: Runtime;
let server: RunningConsole;
let browser: Browser;

beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    SUPPORT_ADDRESS: 'support@acme.example',
    LLM_PROVIDER: 'offline',
    DATA_DIR: '/nonexistent',
  });
  runtime = await openRuntime(config, silentLogger, {});
  server = await startConsole(runtime, { port: 0, host: '127.0.0.1', allowOneTimeLogin: true });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await runtime?.close();
  await db?.drop();
});

describe('the one-time login link', () => {
  it('a wrong link opens nothing; the printed one opens the drafts once, then is spent', async () => {
    expect(server.loginUrl).toMatch(new RegExp(`^${server.url}/login/once/[A-Za-z0-9_-]{43}$`));
    const wrong = await browser.newContext();
    const wrongPage = await wrong.newPage();
    const refused = await wrongPage.goto(`${server.url}/login/once/not-the-token`);
    expect(refused?.status()).toBe(403);
    expect(await textOf(wrongPage.locator('h1'))).toBe('This login link does not work');
    await wrongPage.goto(`${server.url}/drafts`);
    expect(new URL(wrongPage.url()).pathname).toBe('/login');

    const first = await browser.newContext();
    const page = await first.newPage();
    const opened = await page.goto(server.loginUrl!);
    expect(opened?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/drafts');
    expect((await first.cookies()).some((c) => c.name === 'sa_session' && c.httpOnly)).toBe(true);

    const second = await browser.newContext();
    const again = await second.newPage();
    expect((await again.goto(server.loginUrl!))?.status()).toBe(403);
    await Promise.all([wrong.close(), first.close(), second.close()]);
  });

  it('is never offered off loopback, nor unless asked for (start keeps demanding CONSOLE_PASSWORD)', async () => {
    await expect(startConsole(runtime, { port: 0, host: '0.0.0.0', allowOneTimeLogin: true })).rejects.toThrow(/needs CONSOLE_PASSWORD/);
    await expect(startConsole(runtime, { port: 0, host: '127.0.0.1' })).rejects.toThrow(/needs CONSOLE_PASSWORD/);
  });

  it('redeems once, for the exact token only', () => {
    const link = new OneTimeLogin();
    expect(link.redeem('')).toBe(false);
    expect(link.redeem(link.token.slice(0, -1))).toBe(false);
    expect(link.redeem(`${link.token}x`)).toBe(false);
    expect(link.redeem(link.token)).toBe(true);
    expect(link.redeem(link.token)).toBe(false);
    expect(new OneTimeLogin().token).not.toBe(link.token);
  });
});
