// XOAUTH2 for real: Dovecot with an oauth2 passdb asks a loopback introspection endpoint about
// each token, and the agent gets its tokens from a loopback token endpoint with a refresh token.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImapClient, type ImapLogin } from '../../src/imap/imap-client.ts';
import { createAccessTokenSource } from '../../src/net/oauth2-tokens.ts';
import { createSmtpSender } from '../../src/outbound/smtp-sender.ts';
import { startSmtpSink } from '../support/smtp-sink.ts';
import { startAgentProcess } from '../support/agent-process.ts';
import { startDovecot, type DovecotServer } from '../support/dovecot.ts';
import { startOAuth2Server, type OAuth2Server } from '../support/oauth2-server.ts';

const USER = 'support@acme.example';
const CLIENT = { clientId: 'agent-client', clientSecret: 'client-secret-5b1f', refreshToken: 'refresh-token-9c3e' };
const LIFETIME_S = 3600;

describe('XOAUTH2 login to Dovecot with tokens from a token endpoint', () => {
  let provider: OAuth2Server;
  let dovecot: DovecotServer;
  const dirs: string[] = [];

  beforeAll(async () => {
    provider = await startOAuth2Server({ ...CLIENT, username: USER, lifetimeSeconds: LIFETIME_S });
    dovecot = await startDovecot({ oauth2IntrospectionUrl: provider.introspectionUrl });
  }, 60_000);

  afterAll(async () => {
    await dovecot?.destroy();
    await provider?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  /** Logs in, opens INBOX and logs out; resolves with the number of messages, or rejects. */
  async function logIn(login: ImapLogin): Promise<number> {
    const client = await createImapClient(login, { idle: false });
    client.on('error', () => {});
    await client.connect();
    try {
      const lock = await client.getMailboxLock('INBOX');
      try {
        return client.mailbox ? client.mailbox.exists : -1;
      } finally {
        lock.release();
      }
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  it('reuses a token until it nears expiry, refreshes after expiry, and refreshes again after the server refuses one', async () => {
    let clock = Date.parse('2026-12-01T12:00:00Z');
    const tokens = createAccessTokenSource({ tokenUrl: provider.tokenUrl, ...CLIENT }, () => clock);
    const login: ImapLogin = {
      host: dovecot.host,
      port: dovecot.imapPort,
      secure: false,
      rejectUnauthorized: false,
      user: USER,
      oauth2: tokens,
    };
    await dovecot.deliver(USER, 'From: a@example.net\r\nTo: support@acme.example\r\nSubject: hi\r\n\r\nhello\r\n');

    expect(await logIn(login)).toBe(1);
    expect(await logIn(login)).toBe(1);
    expect(provider.issued).toHaveLength(1);
    expect(provider.tokenRequests[0]).toEqual({ grantType: 'refresh_token', ...CLIENT });
    // Dovecot checked the very token the endpoint issued.
    expect(provider.introspected).toContain(provider.issued[0]);

    // An hour later the first token has expired at the provider; the agent refreshes before logging in.
    clock += LIFETIME_S * 1000;
    provider.expire(provider.issued[0]!);
    expect(await logIn(login)).toBe(1);
    expect(provider.issued).toHaveLength(2);
    expect(provider.introspected.at(-1)).toBe(provider.issued[1]);

    // Revoked early (the clock says it is still good): the refused login drops it, the next one refreshes.
    provider.expire(provider.issued[1]!);
    await expect(logIn(login)).rejects.toMatchObject({ authenticationFailed: true });
    expect(await logIn(login)).toBe(1);
    expect(provider.issued).toHaveLength(3);
  }, 60_000);

  it('without a valid token there is no way in, and the error names no secret', async () => {
    const tokens = createAccessTokenSource({ tokenUrl: provider.tokenUrl, ...CLIENT, refreshToken: 'revoked-refresh-token' });
    const login: ImapLogin = {
      host: dovecot.host,
      port: dovecot.imapPort,
      secure: false,
      rejectUnauthorized: false,
      user: USER,
      oauth2: tokens,
    };
    const refused = logIn(login);
    await expect(refused).rejects.toThrow(`OAuth2 token endpoint ${provider.tokenUrl} refused the refresh: invalid_grant`);
    await expect(refused).rejects.toSatisfy((error: Error) => !/revoked-refresh-token|client-secret/.test(error.message));
  });

  it('sends over SMTP with XOAUTH2, and a token the server refuses is replaced and the send goes through', async () => {
    const sink = await startSmtpSink({ requireAuth: true, acceptAccessToken: (user, token) => provider.isActive(user, token) });
    const tokens = createAccessTokenSource({ tokenUrl: provider.tokenUrl, ...CLIENT });
    const sender = createSmtpSender({
      host: '127.0.0.1',
      port: sink.port,
      secure: false,
      rejectUnauthorized: false,
      user: USER,
      password: undefined,
      oauth2: tokens,
    });
    try {
      const mail = (n: number) => ({ from: USER, to: 'customer@example.net', subject: `reply ${n}`, text: 'hello' });
      await sender.send(mail(1));
      const first = provider.issued.length;
      // Revoked at the provider while still fresh by the clock: the server refuses it, nodemailer
      // asks for a renewed token and logs in again.
      provider.expire(provider.issued.at(-1)!);
      sender.close();
      await sender.send(mail(2));
      expect(provider.issued.length).toBe(first + 1);
      const received = await sink.waitForMessages(2);
      expect(received.map((m) => m.authenticatedUser)).toEqual([USER, USER]);
    } finally {
      sender.close();
      await sink.close();
    }
  }, 60_000);

  it('`support-agent start` with MAIL_AUTH=oauth2 polls the mailbox over XOAUTH2 and never logs a secret', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sa-oauth2-'));
    dirs.push(dir);
    const before = provider.issued.length;
    const agent = startAgentProcess(['start'], {
      DATA_DIR: dir,
      REDIS_URL: 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: `oauth2-${process.pid}`,
      SUPPORT_ADDRESS: USER,
      LLM_PROVIDER: 'offline',
      IMAP_HOST: dovecot.host,
      IMAP_PORT: String(dovecot.imapPort),
      IMAP_SECURE: 'false',
      IMAP_USER: USER,
      MAIL_AUTH: 'oauth2',
      OAUTH2_TOKEN_URL: provider.tokenUrl,
      OAUTH2_CLIENT_ID: CLIENT.clientId,
      OAUTH2_CLIENT_SECRET: CLIENT.clientSecret,
      OAUTH2_REFRESH_TOKEN: CLIENT.refreshToken,
    });
    try {
      await agent.waitForLog(/"IMAP connected"/, 150_000);
      expect(provider.issued.length).toBeGreaterThan(before);
      expect((await dovecot.sessions()).map((s) => s.user)).toContain(USER);
    } finally {
      const code = await agent.kill('SIGTERM');
      expect(code, agent.output().slice(-2000)).toBe(0);
    }
    const output = agent.output();
    for (const secret of [CLIENT.clientSecret, CLIENT.refreshToken, ...provider.issued]) expect(output).not.toContain(secret);
  }, 200_000);
});
