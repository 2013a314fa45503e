// The flows behind `support-agent auth`, in-process against the loopback provider: the device flow's
// polling (with a clock that records the waits instead of sleeping) and the loopback redirect flow
// with the test playing the browser. The spawned command is in auth-command.test.ts.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDeviceFlow, runLoopbackFlow, type DevicePrompt, type FlowClock } from '../../src/net/oauth2-grant.ts';
import { startOAuth2Server, type OAuth2Server } from '../support/oauth2-server.ts';

const CLIENT = { clientId: 'agent-client', clientSecret: 'client-secret-5b1f', refreshToken: 'refresh-token-9c3e' };

/** A clock that advances by each wait instead of waiting, and remembers the waits. */
function fakeClock(start = 0): FlowClock & { waits: number[] } {
  let now = start;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: (ms) => {
      waits.push(ms);
      now += ms;
      return Promise.resolve();
    },
  };
}

/** A server that answers every POST with `body` (status `status`), for malformed providers. */
async function startFixedServer(status: number, body: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status, { 'content-type': 'application/json' }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Plays the browser: opens the authorization URL, and follows its redirect (optionally altered) to the listener. */
async function browse(authorizationUrl: string, alter: (redirect: URL) => void = () => {}): Promise<{ status: number; text: string }> {
  const first = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(first.status).toBe(302);
  const redirect = new URL(first.headers.get('location')!);
  alter(redirect);
  const back = await fetch(redirect);
  return { status: back.status, text: await back.text() };
}

describe('device authorization flow', () => {
  let provider: OAuth2Server;
  beforeAll(async () => {
    provider = await startOAuth2Server({ ...CLIENT, username: 'support@acme.example', lifetimeSeconds: 3600, publicClient: true });
  });
  afterAll(() => provider?.close());

  const flow = (clock: FlowClock, timeoutMs = 600_000, onPrompt: (prompt: DevicePrompt) => void = () => {}) =>
    runDeviceFlow({
      deviceUrl: provider.deviceUrl,
      tokenUrl: provider.tokenUrl,
      client: { clientId: CLIENT.clientId },
      scope: 'offline_access imap',
      timeoutMs,
      onPrompt,
      clock,
    });

  it('shows the code, polls at the stated interval until approved, and returns the granted refresh token', async () => {
    provider.nextDevice(['pending', 'pending', 'approve'], { interval: 5 });
    const clock = fakeClock();
    const prompts: unknown[] = [];
    const grant = await flow(clock, 600_000, (p) => void prompts.push(p));
    expect(prompts).toEqual([
      {
        verificationUri: provider.deviceUrl.replace('/devicecode', '/device'),
        verificationUriComplete: undefined,
        userCode: 'WDJB-MJHT',
        expiresInS: 600,
      },
    ]);
    expect(clock.waits).toEqual([5000, 5000, 5000]);
    expect(grant.refreshToken).toBe(provider.granted.at(-1));
    expect(provider.deviceRequests.at(-1)).toEqual({ client_id: CLIENT.clientId, scope: 'offline_access imap' });
    expect(provider.grantRequests.at(-1)).toMatchObject({ grantType: 'urn:ietf:params:oauth:grant-type:device_code', clientSecret: '' });
  });

  it('slow_down adds 5 s to the interval for every later poll', async () => {
    provider.nextDevice(['pending', 'slow_down', 'pending', 'slow_down', 'pending', 'approve'], { interval: 2 });
    const clock = fakeClock();
    await flow(clock);
    // Each wait precedes its poll: the answer to poll 2 (slow_down) stretches the wait before poll 3 on.
    expect(clock.waits).toEqual([2000, 2000, 7000, 7000, 12000, 12000]);
  });

  it('an interval of 0 (or none) is not taken as "poll without pause"', async () => {
    provider.nextDevice(['pending', 'approve'], { interval: 0 });
    const clock = fakeClock();
    await flow(clock);
    expect(clock.waits).toEqual([1000, 1000]);
  });

  it('access_denied and expired_token end the flow with one line each', async () => {
    provider.nextDevice(['pending', 'deny']);
    await expect(flow(fakeClock())).rejects.toThrow('the sign-in was declined (access_denied)');
    provider.nextDevice(['expire']);
    await expect(flow(fakeClock())).rejects.toThrow('the code expired before the sign-in finished (expired_token): run the command again');
  });

  it('gives up at the timeout, or when the code expires, however long the provider keeps saying pending', async () => {
    provider.nextDevice(['pending'], { interval: 5, expiresIn: 900 });
    const clock = fakeClock();
    await expect(flow(clock, 60_000)).rejects.toThrow('no sign-in within 60 s (--timeout): run the command again');
    expect(clock.waits.reduce((a, b) => a + b, 0)).toBe(60_000);
    provider.nextDevice(['pending'], { interval: 5, expiresIn: 30 });
    const short = fakeClock();
    await expect(flow(short, 600_000)).rejects.toThrow('the code expired before the sign-in finished: run the command again');
    expect(short.waits.reduce((a, b) => a + b, 0)).toBe(30_000);
  });

  it('a refused client, or another OAuth2 error, is named with the endpoint and never the secret', async () => {
    const withSecret = runDeviceFlow({
      deviceUrl: provider.deviceUrl,
      tokenUrl: provider.tokenUrl,
      client: { clientId: CLIENT.clientId, clientSecret: 'wrong-secret-77' },
      scope: undefined,
      timeoutMs: 60_000,
      onPrompt: () => {},
      clock: fakeClock(),
    });
    await expect(withSecret).rejects.toThrow(`device authorization endpoint ${provider.deviceUrl} refused: invalid_client`);
    await expect(withSecret).rejects.toSatisfy((e: Error) => !e.message.includes('wrong-secret-77'));
  });

  it.each([
    ['not JSON', 200, '<html>hello</html>', /unexpected answer \(HTTP 200, not an OAuth2 response\)/],
    [
      'no user code',
      200,
      JSON.stringify({ device_code: 'd', verification_uri: 'https://x.example/', expires_in: 600 }),
      /unexpected answer/,
    ],
    [
      'a user code with terminal escapes',
      200,
      JSON.stringify({ device_code: 'd', user_code: '\u001b]0;pwned\u0007', verification_uri: 'https://x.example/', expires_in: 600 }),
      /unexpected answer/,
    ],
    [
      'a javascript: verification link',
      200,
      JSON.stringify({ device_code: 'd', user_code: 'A', verification_uri: 'javascript:alert(1)', expires_in: 9 }),
      /unexpected/,
    ],
    ['an HTTP error without an OAuth2 error', 502, 'Bad Gateway', /unexpected answer \(HTTP 502/],
    ['an answer too large', 200, JSON.stringify({ pad: 'x'.repeat(100_000) }), /answer larger than 65536 bytes/],
    [
      'an error with a long multi-line description',
      400,
      JSON.stringify({ error: 'invalid_scope', error_description: `AADSTS70011: bad scope\r\nTrace ID: 1\u001b[31m` }),
      /refused: invalid_scope: AADSTS70011: bad scope$/,
    ],
  ])('a device endpoint answering %s fails with one clear line', async (_name, status, body, message) => {
    const server = await startFixedServer(status, body);
    try {
      const run = runDeviceFlow({
        deviceUrl: server.url,
        tokenUrl: provider.tokenUrl,
        client: { clientId: CLIENT.clientId },
        scope: undefined,
        timeoutMs: 60_000,
        onPrompt: () => {},
        clock: fakeClock(),
      });
      await expect(run).rejects.toThrow(message);
      await expect(run).rejects.toMatchObject({ code: 'AUTH_FAILED' });
    } finally {
      await server.close();
    }
  });

  it('a token answer without a refresh token says what to fix', async () => {
    const server = await startFixedServer(200, JSON.stringify({ access_token: 'at-only', token_type: 'Bearer' }));
    provider.nextDevice(['approve']);
    try {
      const run = runDeviceFlow({
        deviceUrl: provider.deviceUrl,
        tokenUrl: server.url,
        client: { clientId: CLIENT.clientId },
        scope: undefined,
        timeoutMs: 60_000,
        onPrompt: () => {},
        clock: fakeClock(),
      });
      await expect(run).rejects.toThrow(/granted no refresh token \(Microsoft: the scope needs offline_access/);
    } finally {
      await server.close();
    }
  });
});

describe('loopback redirect flow with PKCE', () => {
  let provider: OAuth2Server;
  beforeAll(async () => {
    provider = await startOAuth2Server({ ...CLIENT, username: 'support@acme.example', lifetimeSeconds: 3600 });
  });
  afterAll(() => provider?.close());

  /** Starts the flow; resolves with the authorization URL once shown, and the flow's result. */
  function start(timeoutMs = 60_000, extraParams: Record<string, string> = { access_type: 'offline' }) {
    let shown!: (url: string) => void;
    const url = new Promise<string>((resolve) => (shown = resolve));
    const result = runLoopbackFlow({
      authUrl: `${provider.authorizeUrl}?hd=acme.example`,
      tokenUrl: provider.tokenUrl,
      client: { clientId: CLIENT.clientId, clientSecret: CLIENT.clientSecret },
      scope: 'https://mail.google.com/',
      extraParams,
      timeoutMs,
      onPrompt: shown,
    });
    result.catch(() => {});
    return { url, result };
  }

  it('sends S256 PKCE and a state, takes the code from the redirect, redeems it with the verifier, and closes the listener', async () => {
    const flow = start();
    const url = await flow.url;
    const page = await browse(url);
    expect(page).toEqual({ status: 200, text: 'Signed in. You can close this tab and return to the terminal.\n' });
    const grant = await flow.result;
    expect(grant.refreshToken).toBe(provider.granted.at(-1));

    const asked = provider.authorizeRequests.at(-1)!;
    expect(asked).toMatchObject({
      hd: 'acme.example',
      access_type: 'offline',
      response_type: 'code',
      client_id: CLIENT.clientId,
      scope: 'https://mail.google.com/',
      code_challenge_method: 'S256',
    });
    expect(asked['state']).toMatch(/^[\w-]{32}$/);
    expect(asked['redirect_uri']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const redeemed = provider.grantRequests.at(-1)!;
    expect(redeemed).toMatchObject({
      grantType: 'authorization_code',
      redirectUri: asked['redirect_uri'],
      clientSecret: CLIENT.clientSecret,
    });
    expect(redeemed.codeVerifier).toMatch(/^[\w-]{43}$/);
    // The listener is gone: the redirect cannot be replayed.
    await expect(fetch(asked['redirect_uri']!)).rejects.toThrow();
  });

  it('the extra parameters cannot replace the PKCE challenge, state or redirect', async () => {
    const flow = start(60_000, { code_challenge_method: 'plain', state: 'attacker', redirect_uri: 'http://evil.example/' });
    await browse(await flow.url);
    await flow.result;
    expect(provider.authorizeRequests.at(-1)).toMatchObject({ code_challenge_method: 'S256' });
    expect(provider.authorizeRequests.at(-1)!['state']).not.toBe('attacker');
    expect(provider.authorizeRequests.at(-1)!['redirect_uri']).toMatch(/^http:\/\/127\.0\.0\.1:/);
  });

  it('ignores other requests to the listener (a favicon, a bare visit) and still takes the real redirect', async () => {
    const flow = start();
    const url = await flow.url;
    const redirectUri = new URL(url).searchParams.get('redirect_uri')!;
    expect((await fetch(new URL('/favicon.ico', redirectUri))).status).toBe(404);
    expect((await fetch(redirectUri)).status).toBe(400);
    expect((await fetch(redirectUri, { method: 'POST', body: 'code=x' })).status).toBe(404);
    await browse(url);
    expect((await flow.result).refreshToken).toBe(provider.granted.at(-1));
  });

  it('a redirect with the wrong state (or none) is refused and the code never redeemed', async () => {
    for (const alter of [(r: URL) => r.searchParams.set('state', 'forged'), (r: URL) => r.searchParams.delete('state')]) {
      const flow = start();
      const redeemedBefore = provider.grantRequests.length;
      const page = await browse(await flow.url, alter);
      expect(page.status).toBe(400);
      await expect(flow.result).rejects.toThrow(
        'the redirect carried a wrong state (not the sign-in this command started): run the command again',
      );
      expect(provider.grantRequests.length).toBe(redeemedBefore);
    }
  });

  it('access_denied from the provider ends the flow with one line', async () => {
    provider.nextAuthorization('deny');
    const flow = start();
    const page = await browse(await flow.url);
    expect(page.status).toBe(400);
    await expect(flow.result).rejects.toThrow('the sign-in was declined (access_denied)');
  });

  it('another error from the provider is named, cleaned of control characters', async () => {
    const flow = start();
    await browse(await flow.url, (r) => {
      r.searchParams.delete('code');
      r.searchParams.set('error', 'invalid_scope\u001b[2J');
    });
    await expect(flow.result).rejects.toThrow(/^authorization endpoint refused: invalid_scope\?\[2J$/);
  });

  it('gives up when no browser comes back in time', async () => {
    const flow = start(1000);
    await flow.url;
    await expect(flow.result).rejects.toThrow('no sign-in redirect within 1 s (--timeout): run the command again');
  });

  it('a code the token endpoint refuses (here: redeemed with a wrong client secret) fails without naming code or secret', async () => {
    let shown!: (url: string) => void;
    const url = new Promise<string>((resolve) => (shown = resolve));
    const result = runLoopbackFlow({
      authUrl: provider.authorizeUrl,
      tokenUrl: provider.tokenUrl,
      client: { clientId: CLIENT.clientId, clientSecret: 'not-the-secret-42' },
      scope: undefined,
      timeoutMs: 60_000,
      onPrompt: shown,
    });
    result.catch(() => {});
    await browse(await url);
    await expect(result).rejects.toThrow(`token endpoint ${provider.tokenUrl} refused: invalid_client`);
    await expect(result).rejects.toSatisfy((e: Error) => !/not-the-secret-42|code-/.test(e.message));
  });
});
