// The review console behind a real TLS-terminating reverse proxy on loopback (node:https with a
// certificate made by openssl for this run), driven by headless Chromium and by plain HTTP clients
// bound to different loopback addresses: login through the proxy, Secure cookies, forms, the host
// check against DNS rebinding, and the per-address login throttle.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime, type Runtime } from '../../src/app/runtime.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { startConsole, type RunningConsole } from '../../src/console/server.ts';
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import { createLogger, silentLogger } from '../../src/logger.ts';
import { launchBrowser, screenshot, textOf, visible } from '../support/browser.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

const PASSWORD = 'correct horse battery staple';
const SUPPORT = 'support@acme.example';
const REDIS_URL = 'redis://127.0.0.1:6379';
const QUEUE_PREFIX = `console-proxy-test-${randomBytes(4).toString('hex')}`;
const PUBLIC_HOST = 'support.test';
const EVIL_HOST = 'rebind.evil.example';
/** The proxy reaches the console from this address, the only one the consoles trust. */
const PROXY_ADDRESS = '127.0.0.5';
const OPERATOR_ADDRESS = '127.0.0.3';
const ATTACKER_ADDRESS = '127.0.0.2';

// --- a TLS-terminating reverse proxy, configured as nginx usually is ---------------------------

interface TlsProxy {
  port: number;
  /** Where requests go; set once the console behind it is listening. */
  upstream: URL | null;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

/**
 * Terminates TLS and forwards over plain HTTP from PROXY_ADDRESS, appending the client's address to
 * X-Forwarded-For and overwriting X-Forwarded-Proto and -Host (nginx's `$proxy_add_x_forwarded_for`,
 * `$scheme`, `$host`). `preserveHost: false` sends the upstream's own address as Host, nginx's default.
 */
async function startTlsProxy(tls: { key: Buffer; cert: Buffer }, options: { preserveHost: boolean }): Promise<TlsProxy> {
  const proxy: TlsProxy = { port: 0, upstream: null, close: async () => {} };
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const upstream = proxy.upstream;
    if (!upstream) {
      res.writeHead(502).end('no upstream');
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    const previous = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = previous ? `${String(previous)}, ${req.socket.remoteAddress}` : req.socket.remoteAddress;
    headers['x-forwarded-proto'] = 'https';
    headers['x-forwarded-host'] = req.headers.host ?? '';
    if (!options.preserveHost) headers['host'] = upstream.host;
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, localAddress: PROXY_ADDRESS, method: req.method, path: req.url, headers },
      (answer) => {
        const back: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) back[name] = value;
        res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
      },
    );
    forward.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end('upstream failed')));
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return proxy;
}

// --- a small HTTP(S) client that can choose its source address and Host ------------------------

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  cookies: string[];
  text: string;
}

interface Target {
  /** `https:` through the proxy, `http:` directly to the console. */
  protocol: 'http:' | 'https:';
  port: number;
  /** The Host header (and TLS server name); the connection always goes to 127.0.0.1. */
  host: string;
  /** The client's own address on loopback. */
  from: string;
}

let certificate: Buffer;
let tlsKey: Buffer;

function send(
  target: Target,
  pathname: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const hostname = target.host.replace(/:\d+$/, '');
  const options: https.RequestOptions = {
    host: '127.0.0.1',
    port: target.port,
    localAddress: target.from,
    method: init.method ?? 'GET',
    path: pathname,
    headers: { host: target.host, ...init.headers },
    agent: false,
  };
  return new Promise((resolve, reject) => {
    const onAnswer = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const raw = res.headers['set-cookie'] ?? [];
        resolve({ status: res.statusCode ?? 0, headers: res.headers, cookies: raw, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    };
    // The certificate is verified for real: the test trusts exactly the one it made.
    const req =
      target.protocol === 'https:'
        ? https.request({ ...options, ca: certificate, servername: net.isIP(hostname) ? undefined : hostname }, onAnswer)
        : http.request(options, onAnswer);
    req.on('error', reject);
    req.end(init.body);
  });
}

function cookieNamed(answer: Answer, name: string): string | undefined {
  return answer.cookies.find((c) => c.startsWith(`${name}=`));
}

/** One login as a browser does it: the form (its cookie and token), then the post. */
async function attemptLogin(target: Target, password: string, headers: Record<string, string> = {}): Promise<Answer> {
  const form = await send(target, '/login', { headers });
  const loginCookie = cookieNamed(form, 'sa_login')?.split(';')[0];
  const token = /name="_login" value="([^"]+)"/.exec(form.text)?.[1];
  if (!loginCookie || !token) throw new Error(`no login form (status ${form.status})`);
  return send(target, '/login', {
    method: 'POST',
    headers: { ...headers, cookie: loginCookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ password, _login: token }).toString(),
  });
}

async function makeCertificate(dir: string): Promise<{ key: Buffer; cert: Buffer }> {
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '1',
    '-subj',
    `/CN=${PUBLIC_HOST}`,
    '-addext',
    `subjectAltName=DNS:${PUBLIC_HOST},DNS:${EVIL_HOST},IP:127.0.0.1`,
  ]);
  return { key: await readFile(keyFile), cert: await readFile(certFile) };
}

function eml(from: string, token: string): Buffer {
  return Buffer.from(
    [
      `From: ${from}`,
      `To: Support <${SUPPORT}>`,
      `Subject: Where is my parcel? [${token}]`,
      `Message-ID: <${token}@example.net>`,
      `Date: ${new Date().toUTCString()}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Hello, my parcel has not arrived yet.',
      '',
    ].join('\r\n'),
  );
}

describe('the review console behind a TLS proxy', () => {
  let db: TestDatabase;
  let runtime: Runtime;
  let tmp: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const consoles: RunningConsole[] = [];
  const proxies: TlsProxy[] = [];
  const logLines: string[] = [];

  /** CONSOLE_PUBLIC_URL + trusted proxy; the proxy rewrites Host to the console's address (nginx's default). */
  let withPublicUrl: { proxy: TlsProxy; console: RunningConsole };
  /** Trusted proxy + CONSOLE_ALLOWED_HOSTS, no public URL; the proxy keeps the browser's Host. */
  let withProxyOnly: { proxy: TlsProxy; console: RunningConsole };
  /** Neither setting: the console as it was before, behind a proxy set up as nginx's default (Host rewritten). */
  let unconfigured: { proxy: TlsProxy; console: RunningConsole };

  const viaProxy = (proxy: TlsProxy, from = OPERATOR_ADDRESS): Target => ({
    protocol: 'https:',
    port: proxy.port,
    host: `${PUBLIC_HOST}:${proxy.port}`,
    from,
  });
  const direct = (server: RunningConsole, from = '127.0.0.1', host?: string): Target => {
    const port = Number(new URL(server.url).port);
    return { protocol: 'http:', port, host: host ?? `127.0.0.1:${port}`, from };
  };

  async function behindProxy(settings: Partial<Config['console']>, preserveHost: boolean, publicUrlFor?: (proxyPort: number) => string) {
    const proxy = await startTlsProxy({ key: tlsKey, cert: certificate }, { preserveHost });
    proxies.push(proxy);
    const consoleSettings: Config['console'] = {
      ...runtime.config.console,
      ...settings,
      ...(publicUrlFor ? { publicUrl: publicUrlFor(proxy.port) } : {}),
    };
    const server = await startConsole({ ...runtime, config: { ...runtime.config, console: consoleSettings } }, { port: 0 });
    consoles.push(server);
    proxy.upstream = new URL(server.url);
    return { proxy, console: server };
  }

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'console-proxy-'));
    ({ key: tlsKey, cert: certificate } = await makeCertificate(tmp));
    db = await createTestDatabase({ migrated: true });
    const config = loadConfig({
      DATABASE_URL: db.url,
      REDIS_URL,
      QUEUE_PREFIX,
      SUPPORT_ADDRESS: SUPPORT,
      LLM_PROVIDER: 'offline',
      CONSOLE_PASSWORD: PASSWORD,
      RECONCILE_INTERVAL: '1h',
    });
    const logger = createLogger('console-proxy-test', { level: 'trace', write: (line) => logLines.push(line) });
    runtime = await openRuntime(config, logger, { longRunning: true });
    withPublicUrl = await behindProxy({ trustedProxies: [PROXY_ADDRESS] }, false, (port) => `https://${PUBLIC_HOST}:${port}`);
    withProxyOnly = await behindProxy({ trustedProxies: [PROXY_ADDRESS], allowedHosts: [PUBLIC_HOST] }, true);
    unconfigured = await behindProxy({}, false);
    // Chromium resolves the test's names to loopback itself, as a rebinding attacker's DNS would.
    browser = await launchBrowser([`--host-resolver-rules=MAP ${PUBLIC_HOST} 127.0.0.1, MAP ${EVIL_HOST} 127.0.0.1`]);
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    for (const server of consoles) await server.close().catch(() => {});
    for (const proxy of proxies) await proxy.close();
    await runtime?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${QUEUE_PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await db?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 60_000);

  async function newContext(): Promise<BrowserContext> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    return context;
  }

  it('without CONSOLE_PUBLIC_URL or a trusted proxy, a login through the TLS proxy is refused (the reported failure)', async () => {
    const target = viaProxy(unconfigured.proxy);
    const origin = `https://${target.host}`;
    const form = await send(target, '/login');
    expect(form.status).toBe(200);
    expect(cookieNamed(form, 'sa_login')).not.toMatch(/;\s*Secure/i);
    const answer = await attemptLogin(target, PASSWORD, { origin });
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('The login form had expired');
    expect(cookieNamed(answer, 'sa_session')).toBeUndefined();
  });

  it('with CONSOLE_PUBLIC_URL, the operator logs in through the proxy in Chromium: Secure HttpOnly cookies, forms post', async () => {
    const token = `case-${randomBytes(4).toString('hex')}`;
    const ingested = await ingestRawMessage(
      runtime.ingestDeps({ logger: silentLogger, pipeline: null }),
      eml('Dana <dana@example.net>', token),
      { kind: 'api' },
    );
    const entityId = ingested.entityId!;
    const base = `https://${PUBLIC_HOST}:${withPublicUrl.proxy.port}`;
    const context = await newContext();
    const page = await context.newPage();

    await page.goto(`${base}/customers/${entityId}`);
    expect(page.url()).toBe(`${base}/login?next=${encodeURIComponent(`/customers/${entityId}`)}`);
    await page.getByLabel('Operator password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${base}/customers/${entityId}`);
    expect(await textOf(page.getByRole('heading', { level: 1 }))).toBe('Dana');
    const session = (await context.cookies()).find((c) => c.name === 'sa_session');
    expect(session).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict', path: '/', domain: PUBLIC_HOST });
    expect((await context.cookies()).some((c) => c.name === 'sa_login')).toBe(false);

    // A state-changing form: its token and Origin (https://support.test:…) pass the checks.
    await page.getByLabel('Key (snake_case)').fill('preferred_language');
    await page.getByLabel('Value').fill('Danish');
    await page.getByRole('button', { name: 'Set fact' }).click();
    await visible(page.getByText('Set the fact.'));
    expect(new URL(page.url()).origin).toBe(base);
    const fact = await runtime.db.profileFact.findFirst({ where: { entityId, key: 'preferred_language', status: 'active' } });
    expect(fact?.value).toBe('Danish');
    await screenshot(page, 'console-behind-tls-proxy');

    await page.getByRole('button', { name: 'Log out' }).click();
    expect(await textOf(page.getByRole('status'))).toBe('You are logged out.');
    expect(new URL(page.url()).origin).toBe(base);
  }, 60_000);

  it("with a trusted proxy alone, the proxy's X-Forwarded-Proto and -Host make the cookies Secure and the Origin match", async () => {
    const target = viaProxy(withProxyOnly.proxy);
    const origin = `https://${target.host}`;
    const form = await send(target, '/login');
    expect(cookieNamed(form, 'sa_login')).toMatch(/;\s*Secure/i);
    const login = await attemptLogin(target, PASSWORD, { origin });
    expect(login.status).toBe(303);
    // Redirects are paths, so they stay on whatever origin the browser used.
    expect(login.headers.location).toBe('/drafts');
    const session = cookieNamed(login, 'sa_session')!;
    expect(session).toMatch(/;\s*Secure/i);
    expect(session).toMatch(/;\s*HttpOnly/i);
    expect(session).toMatch(/;\s*SameSite=Strict/i);

    const cookie = session.split(';')[0]!;
    const drafts = await send(target, '/drafts', { headers: { cookie } });
    expect(drafts.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(drafts.text)![1]!;
    const logoutFrom = (from: string) =>
      send(target, '/logout', {
        method: 'POST',
        headers: { cookie, origin: from, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf }).toString(),
      });
    expect((await logoutFrom('https://evil.example')).status).toBe(403);
    expect((await logoutFrom(`http://${target.host}`)).status).toBe(403);
    const loggedOut = await logoutFrom(origin);
    expect(loggedOut.status).toBe(303);
    expect(loggedOut.headers.location).toBe('/login?notice=logged-out');
  });

  it('the same forwarding headers sent straight to the console by anyone else are ignored', async () => {
    const target = direct(withProxyOnly.console, '127.0.0.1');
    const forged = { 'x-forwarded-proto': 'https', 'x-forwarded-host': target.host, forwarded: `proto=https;host="${target.host}"` };
    const form = await send(target, '/login', { headers: forged });
    expect(form.status).toBe(200);
    expect(cookieNamed(form, 'sa_login')).not.toMatch(/;\s*Secure/i);
    // The forged scheme does not make a browser's https Origin acceptable on this plain connection.
    const refused = await attemptLogin(target, PASSWORD, { ...forged, origin: `https://${target.host}` });
    expect(refused.status).toBe(403);
    const plain = await attemptLogin(target, PASSWORD, { origin: `http://${target.host}` });
    expect(plain.status).toBe(303);
    expect(cookieNamed(plain, 'sa_session')).not.toMatch(/;\s*Secure/i);
    // A forwarded host from an untrusted peer is not even checked; from the proxy it would be refused.
    expect((await send(target, '/login', { headers: { 'x-forwarded-host': EVIL_HOST } })).status).toBe(200);
    expect(
      (await send(viaProxy(withPublicUrl.proxy), '/login', { headers: { host: `${EVIL_HOST}:${withPublicUrl.proxy.port}` } })).status,
    ).toBe(421);
  });

  it('a DNS-rebinding page gets 421 before any session is looked at, in Chromium and over plain HTTP', async () => {
    const server = withPublicUrl.console;
    const port = Number(new URL(server.url).port);
    const context = await newContext();
    const page = await context.newPage();
    // The attacker's name now resolves to 127.0.0.1, so the browser talks to the console itself.
    const rebound = await page.goto(`http://${EVIL_HOST}:${port}/login`);
    expect(rebound!.status()).toBe(421);
    expect(await page.locator('body').innerText()).toMatch(/does not answer to this host name/);
    expect(await context.cookies()).toEqual([]);
    const throughProxy = await page.goto(`https://${EVIL_HOST}:${withPublicUrl.proxy.port}/login`);
    expect(throughProxy!.status()).toBe(421);
    // The same console answers on its own names.
    expect((await page.goto(`http://127.0.0.1:${port}/login`))!.status()).toBe(200);
    expect((await page.goto(`http://localhost:${port}/login`))!.status()).toBe(200);

    // A valid session does not help: the host check comes first.
    const login = await attemptLogin(direct(server), PASSWORD);
    const cookie = cookieNamed(login, 'sa_session')!.split(';')[0]!;
    expect((await send(direct(server), '/drafts', { headers: { cookie } })).status).toBe(200);
    for (const host of [
      EVIL_HOST,
      `${EVIL_HOST}:${port}`,
      `127.0.0.1.${EVIL_HOST}:${port}`,
      `EVIL.example.`,
      `localhost:${port}@${EVIL_HOST}`,
    ]) {
      const answer = await send(direct(server, '127.0.0.1', host), '/drafts', { headers: { cookie } });
      // @hono/node-server itself answers 400 to a Host with user info, before the console sees it.
      expect(host.includes('@') ? [400] : [421], host).toContain(answer.status);
      expect(answer.text).not.toContain('Drafts');
    }
    for (const host of [`LOCALHOST.:${port}`, `[::1]:${port}`, `127.0.0.7:${port}`, `${PUBLIC_HOST}:${withPublicUrl.proxy.port}`]) {
      expect((await send(direct(server, '127.0.0.1', host), '/drafts', { headers: { cookie } })).status, host).toBe(200);
    }
  }, 60_000);

  it('an empty Host and an absolute-form request for another host are refused too', async () => {
    const port = Number(new URL(withPublicUrl.console.url).port);
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect({ host: '127.0.0.1', port }, () => socket.end(request));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk) => chunks.push(chunk));
        socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
        socket.on('error', reject);
      });
    expect(await raw('GET /login HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 421 /);
    expect(await raw(`GET http://${EVIL_HOST}/login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 421 /,
    );
    expect(await raw(`GET /login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('25 wrong passwords from one client through the proxy do not lock out the operator at another address', async () => {
    const attacker = viaProxy(withPublicUrl.proxy, ATTACKER_ADDRESS);
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let i = 0; i < 25; i++) {
      // Rotating a forged X-Forwarded-For does not help: the proxy appends the real address.
      const answer = await attemptLogin(attacker, `guess-${i}`, { 'x-forwarded-for': `198.51.100.${i}` });
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter ??= String(answer.headers['retry-after']);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(8);
    expect(statuses.at(-1)).toBe(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Even the right password is not tried from the attacker's address while it waits.
    expect((await attemptLogin(attacker, PASSWORD)).status).toBe(429);

    const operator = await attemptLogin(viaProxy(withPublicUrl.proxy, OPERATOR_ADDRESS), PASSWORD);
    expect(operator.status).toBe(303);
    expect(cookieNamed(operator, 'sa_session')).toMatch(/;\s*Secure/i);
  }, 60_000);

  it('directly, without a proxy: a forged X-Forwarded-For is ignored and the operator at 127.0.0.1 still gets in', async () => {
    const server = unconfigured.console;
    const attacker = direct(server, ATTACKER_ADDRESS);
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++)
      statuses.push((await attemptLogin(attacker, `guess-${i}`, { 'x-forwarded-for': `203.0.113.${i}` })).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
    expect((await attemptLogin(direct(server, OPERATOR_ADDRESS), PASSWORD)).status).toBe(303);
    expect((await attemptLogin(direct(server, '127.0.0.1'), PASSWORD)).status).toBe(303);
  }, 60_000);

  it('logs refused logins without the password', () => {
    const log = logLines.join('\n');
    expect(log).toContain('console login refused: wrong password');
    expect(log).not.toContain(PASSWORD);
  });
});
