// `support-agent auth` as an operator runs it: the real command against a provider on loopback
// (test/support/oauth2-server.ts), the test playing the operator's browser. The first case spawns
// the binary (a child process, as an operator starts it); the others run the same main() in-process
// (test/support/cli-run.ts: same environment and output), sparing seconds of start-up each.
// The refresh token it prints is then used as the agent would (the settings through loadConfig)
// to log in to Dovecot over XOAUTH2, Dovecot checking each access token at the same provider.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { loadConfig } from '../../src/config.ts';
import { createImapClient } from '../../src/imap/imap-client.ts';
import { createAccessTokenSource } from '../../src/net/oauth2-tokens.ts';
import { startCliInProcess, stderrWaiter } from '../support/cli-run.ts';
import { startDovecot, type DovecotServer } from '../support/dovecot.ts';
import { startOAuth2Server, type OAuth2Server } from '../support/oauth2-server.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/support-agent.js');
const USER = 'support@acme.example';
const CLIENT = { clientId: 'agent-client', clientSecret: 'client-secret-5b1f', refreshToken: 'refresh-token-9c3e' };
/** A spawned command on a busy 2-core machine (tsx compiles the sources first) gets this long before it is killed. */
const COMMAND_TIMEOUT_MS = 90_000;

interface Running {
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match on stderr, rejects if the command exits first. */
  waitForStderr(pattern: RegExp): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

/** The binary in a child process. */
function spawnAuth(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [BIN, 'auth', ...args], {
    env: { PATH: process.env['PATH'] ?? '', HOME: os.tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    for (const listener of listeners) listener();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      for (const listener of listeners) listener();
      resolve(code);
    }),
  );
  let done = false;
  void exited.then(() => (done = true));
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStderr: stderrWaiter(
      () => stderr,
      listeners,
      () => done,
    ),
  };
}

/** The command's logic in-process, with the same environment and captured output. */
const runAuth = (args: string[], env: Record<string, string> = {}): Running => startCliInProcess(['auth', ...args], env);

/** The NAME=value lines as a .env loader reads them (bare or single-quoted values; comments skipped). */
function parseSettings(text: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z0-9_]+)=(?:'([^']*)'|(\S*))$/.exec(line);
    if (match) settings[match[1]!] = match[2] ?? match[3]!;
    else expect(line === '' || line.startsWith('#'), `unexpected line ${line}`).toBe(true);
  }
  return settings;
}

/** Plays the browser: opens the authorization URL and follows its redirect (optionally altered) to the command. */
async function browse(authorizationUrl: string, alter: (redirect: URL) => void = () => {}): Promise<number> {
  const first = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(first.status).toBe(302);
  const redirect = new URL(first.headers.get('location')!);
  alter(redirect);
  const back = await fetch(redirect);
  await back.text();
  return back.status;
}

describe('support-agent auth', { timeout: 2 * COMMAND_TIMEOUT_MS }, () => {
  let provider: OAuth2Server;
  let dovecot: DovecotServer;
  let dir: string;

  beforeAll(async () => {
    provider = await startOAuth2Server({ ...CLIENT, username: USER, lifetimeSeconds: 3600, publicClient: true });
    dovecot = await startDovecot({ oauth2IntrospectionUrl: provider.introspectionUrl });
    dir = await mkdtemp(path.join(os.tmpdir(), 'sa-auth-'));
    await dovecot.deliver(USER, 'From: a@example.net\r\nTo: support@acme.example\r\nSubject: hi\r\n\r\nhello\r\n');
  }, 60_000);

  afterAll(async () => {
    await dovecot?.destroy();
    await provider?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Logs in to Dovecot over XOAUTH2 with the printed settings, as the agent's configuration reads them; returns INBOX's count. */
  async function logInWith(settings: Record<string, string>, clientSecret?: string): Promise<number> {
    const config = loadConfig({
      ...settings,
      ...(clientSecret ? { OAUTH2_CLIENT_SECRET: clientSecret } : {}),
      IMAP_HOST: dovecot.host,
      IMAP_PORT: String(dovecot.imapPort),
      IMAP_SECURE: 'false',
      IMAP_USER: USER,
    });
    const client = await createImapClient(
      {
        host: dovecot.host,
        port: dovecot.imapPort,
        secure: false,
        rejectUnauthorized: false,
        user: USER,
        oauth2: createAccessTokenSource(config.oauth2!),
      },
      { idle: false },
    );
    client.on('error', () => {});
    await client.connect();
    try {
      const status = await client.status('INBOX', { messages: true });
      return status ? (status.messages ?? -1) : -1;
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  const microsoftArgs = () => ['microsoft', '--device-url', provider.deviceUrl, '--token-url', provider.tokenUrl];

  it('microsoft: shows the code, polls through pending and slow_down until approved, prints the settings once; the token opens the mailbox', async () => {
    provider.nextDevice(['pending', 'slow_down', 'approve'], { interval: 1 });
    const polls = provider.grantRequests.length;
    const run = spawnAuth(microsoftArgs(), { OAUTH2_CLIENT_ID: CLIENT.clientId });
    await run.waitForStderr(/open http:\/\/127\.0\.0\.1:\d+\/device and enter the code WDJB-MJHT/);
    expect(await run.exited, run.stderr()).toBe(0);

    expect(provider.grantRequests.length - polls).toBe(3);
    expect(provider.deviceRequests.at(-1)).toEqual({
      client_id: CLIENT.clientId,
      scope: 'offline_access https://outlook.office.com/IMAP.AccessAsUser.All https://outlook.office.com/SMTP.Send',
    });
    const refreshToken = provider.granted.at(-1)!;
    const settings = parseSettings(run.stdout());
    expect(settings).toEqual({
      MAIL_AUTH: 'oauth2',
      OAUTH2_PROVIDER: 'microsoft',
      OAUTH2_TOKEN_URL: provider.tokenUrl,
      OAUTH2_CLIENT_ID: CLIENT.clientId,
      OAUTH2_SCOPE: 'offline_access https://outlook.office.com/IMAP.AccessAsUser.All https://outlook.office.com/SMTP.Send',
      OAUTH2_REFRESH_TOKEN: refreshToken,
    });
    expect(run.stdout().split(refreshToken)).toHaveLength(2);
    expect(run.stderr()).not.toContain(refreshToken);
    expect(run.stderr()).not.toMatch(/at-\d+-/);

    const introspected = provider.introspected.length;
    expect(await logInWith(settings)).toBe(1);
    expect(provider.introspected.length).toBeGreaterThan(introspected);
    expect(provider.tokenRequests.at(-1)).toMatchObject({ grantType: 'refresh_token', refreshToken, clientSecret: '' });
  });

  it.each([
    ['deny', 'the sign-in was declined (access_denied)'],
    ['expire', 'the code expired before the sign-in finished (expired_token): run the command again'],
  ] as const)('microsoft: %s ends the command with one line and exit 1, nothing on stdout', async (answer, message) => {
    provider.nextDevice(['pending', answer], { interval: 1 });
    const run = runAuth([...microsoftArgs(), '--client-id', CLIENT.clientId]);
    expect(await run.exited).toBe(1);
    expect(run.stderr().trim().split('\n').at(-1)).toBe(`support-agent: AUTH_FAILED: ${message}`);
    expect(run.stdout()).toBe('');
  });

  const googleArgs = () => ['google', '--auth-url', provider.authorizeUrl, '--token-url', provider.tokenUrl];
  const googleEnv = { OAUTH2_CLIENT_ID: CLIENT.clientId, OAUTH2_CLIENT_SECRET: CLIENT.clientSecret };

  it('google: the browser signs in and comes back to the command, which writes the settings to a new 0600 file; the token opens the mailbox', async () => {
    const out = path.join(dir, 'oauth2.env');
    const run = runAuth([...googleArgs(), '--out', out], googleEnv);
    const [url] = await run.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/);
    expect(await browse(url)).toBe(200);
    expect(await run.exited, run.stderr()).toBe(0);

    expect(provider.authorizeRequests.at(-1)).toMatchObject({
      scope: 'https://mail.google.com/',
      access_type: 'offline',
      prompt: 'consent',
      code_challenge_method: 'S256',
    });
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const text = await readFile(out, 'utf8');
    const settings = parseSettings(text);
    const refreshToken = provider.granted.at(-1)!;
    expect(settings).toEqual({
      MAIL_AUTH: 'oauth2',
      OAUTH2_PROVIDER: 'google',
      OAUTH2_TOKEN_URL: provider.tokenUrl,
      OAUTH2_CLIENT_ID: CLIENT.clientId,
      OAUTH2_REFRESH_TOKEN: refreshToken,
    });
    expect(text).toContain('# OAUTH2_CLIENT_SECRET: the client secret used here (not printed)');
    expect(text).not.toContain(CLIENT.clientSecret);
    expect(run.stdout()).toBe('');
    expect(run.stderr()).toContain(`in ${out} (mode 0600)`);
    for (const secret of [refreshToken, CLIENT.clientSecret]) expect(run.stderr()).not.toContain(secret);

    expect(await logInWith(settings, CLIENT.clientSecret)).toBe(1);
  });

  it('google: a redirect with the wrong state is refused, the code never redeemed, no file written', async () => {
    const out = path.join(dir, 'wrong-state.env');
    const redeemed = provider.grantRequests.length;
    const run = runAuth([...googleArgs(), '--out', out], googleEnv);
    const [url] = await run.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/);
    expect(await browse(url, (r) => r.searchParams.set('state', 'forged-state'))).toBe(400);
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain('support-agent: AUTH_FAILED: the redirect carried a wrong state (not the sign-in this command started)');
    expect(provider.grantRequests.length).toBe(redeemed);
    await expect(stat(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('google: access_denied in the browser ends the command with one line', async () => {
    provider.nextAuthorization('deny');
    const run = runAuth(googleArgs(), googleEnv);
    const [url] = await run.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/);
    expect(await browse(url)).toBe(400);
    expect(await run.exited).toBe(1);
    expect(run.stderr().trim().split('\n').at(-1)).toBe('support-agent: AUTH_FAILED: the sign-in was declined (access_denied)');
    expect(run.stdout()).toBe('');
  });

  it('refuses before any sign-in: an existing --out file, a plain-http remote endpoint, a missing secret', async () => {
    const existing = path.join(dir, 'existing.env');
    await writeFile(existing, 'KEEP=me\n');
    const requests = provider.deviceRequests.length;
    const spawned = spawnAuth([...microsoftArgs(), '--out', existing], { OAUTH2_CLIENT_ID: CLIENT.clientId });
    expect(await spawned.exited).toBe(2);
    expect(spawned.stderr()).toBe(`support-agent: USAGE: ${existing} already exists: name a new file (it is created with mode 0600)\n`);
    expect(await readFile(existing, 'utf8')).toBe('KEEP=me\n');

    // The same command line in-process (a spawn costs seconds of start-up on a busy machine).
    const cases: Array<[string[], RegExp]> = [
      [['microsoft', '--client-id', 'x', '--token-url', 'http://login.example.com/token'], /must be an https:\/\/ URL/],
      [['microsoft', '--client-id', 'x', '--device-url', 'https://user:pw@login.example.com/dc'], /must not carry credentials/],
      [['microsoft', '--client-id', 'x', '--timeout', 'soon'], /must be a duration between 1s and 24h/],
      [['google', '--client-id', 'x'], /google needs --client-secret or OAUTH2_CLIENT_SECRET/],
      [['yahoo', '--client-id', 'x'], /Allowed choices are google, microsoft, custom/],
      [['custom', '--client-id', 'x', '--token-url', 'https://p.example/t'], /needs --device-url \(device-code flow\) or --auth-url/],
    ];
    for (const [args, message] of cases) {
      const writes: string[] = [];
      const original = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((chunk: string | Uint8Array) => {
        writes.push(String(chunk));
        return true;
      }) as typeof process.stderr.write;
      try {
        expect(await main(['auth', ...args])).toBe(2);
      } finally {
        process.stderr.write = original;
      }
      expect(writes.join('')).toMatch(message);
      expect(writes.join('').trim().split('\n')).toHaveLength(1);
    }
    expect(provider.deviceRequests.length).toBe(requests);
  });
});
