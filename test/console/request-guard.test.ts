/**
 * The request guard in front of every console route: the host check, and how the request's origin,
 * client address and cookie security are derived with and without a proxy. Driven through Hono
 * with the socket's peer address given the way @hono/node-server gives it (`env.incoming`).
 */
import type { IncomingMessage } from 'node:http';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { ConsoleEnv, RequestView } from '../../src/console/context.ts';
import { consoleSite, MISDIRECTED_MESSAGE, requestGuard, type ConsoleSiteOptions } from '../../src/console/request-guard.ts';

/** What the test route answers: the guard's view of the request. */
type ViewResponse = Omit<Response, 'json'> & { json(): Promise<RequestView> };

function guardedApp(options: Partial<ConsoleSiteOptions> = {}) {
  const refused: string[] = [];
  const app = new Hono<ConsoleEnv>();
  app.use(
    '*',
    requestGuard(consoleSite({ boundHost: '127.0.0.1', ...options }), (host) => refused.push(host)),
  );
  app.all('*', (c) => c.json(c.get('request')));
  const request = async (init: { host?: string; peer?: string; headers?: Record<string, string>; url?: string }): Promise<ViewResponse> => {
    const headers = new Headers(init.headers ?? {});
    if (init.host !== undefined) headers.set('host', init.host);
    const env = { incoming: { socket: { remoteAddress: init.peer ?? '127.0.0.1' } } as unknown as IncomingMessage };
    return (await app.request(init.url ?? `http://${init.host ?? 'localhost'}/login`, { headers }, env)) as unknown as ViewResponse;
  };
  return { request, refused };
}

describe('the host check', () => {
  const { request, refused } = guardedApp({ publicUrl: 'https://support.example.com', allowedHosts: ['console.internal'] });

  it.each(['127.0.0.1:3000', 'localhost:3000', '[::1]:3000', 'support.example.com', 'console.internal:3000', 'Console.Internal.'])(
    'serves Host: %s',
    async (host) => {
      expect((await request({ host })).status).toBe(200);
    },
  );

  it.each([
    'rebind.evil.example',
    'rebind.evil.example:3000',
    '127.0.0.1.evil.example:3000',
    'evil.example',
    'support.example.com.evil.example',
  ])('refuses Host: %s with 421 and a plain message', async (host) => {
    const response = await request({ host });
    expect(response.status).toBe(421);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toBe(MISDIRECTED_MESSAGE);
    expect(refused.at(-1)).toBe(host);
  });

  it('refuses an empty Host', async () => {
    expect((await request({ host: '', url: 'http://127.0.0.1/login' })).status).toBe(421);
  });

  it('refuses an absolute-form target for another host even when Host is fine', async () => {
    expect((await request({ host: '127.0.0.1:3000', url: 'http://rebind.evil.example/login' })).status).toBe(421);
  });

  it("answers to the bound address, and to the machine's addresses only when bound to all of them", async () => {
    const bound = guardedApp({ boundHost: '10.0.0.5', interfaceAddresses: ['192.168.1.9'] });
    expect((await bound.request({ host: '10.0.0.5:3000' })).status).toBe(200);
    expect((await bound.request({ host: '192.168.1.9:3000' })).status).toBe(421);
    const everywhere = guardedApp({ boundHost: '0.0.0.0', interfaceAddresses: ['192.168.1.9', 'fe80::1%eth0'] });
    expect((await everywhere.request({ host: '192.168.1.9:3000' })).status).toBe(200);
    expect((await everywhere.request({ host: '[fe80::1]:3000' })).status).toBe(200);
    expect((await everywhere.request({ host: '0.0.0.0:3000' })).status).toBe(421);
  });

  it('checks the host a trusted proxy forwards, too', async () => {
    const proxied = guardedApp({ trustedProxies: ['127.0.0.1'], publicUrl: 'https://support.example.com' });
    const forwardedEvil = await proxied.request({ host: '127.0.0.1:3000', headers: { 'x-forwarded-host': 'rebind.evil.example' } });
    expect(forwardedEvil.status).toBe(421);
    const forwardedOk = await proxied.request({ host: '127.0.0.1:3000', headers: { 'x-forwarded-host': 'support.example.com' } });
    expect(forwardedOk.status).toBe(200);
    // From a peer that is not the proxy, the header is not read at all.
    const untrusted = await proxied.request({
      host: '127.0.0.1:3000',
      peer: '127.0.0.9',
      headers: { 'x-forwarded-host': 'rebind.evil.example' },
    });
    expect(untrusted.status).toBe(200);
  });
});

describe('the request view', () => {
  it('direct use on loopback: the origin is the one the browser used, no Secure cookies', async () => {
    const { request } = guardedApp();
    expect(await (await request({ host: '127.0.0.1:3000', peer: '127.0.0.1' })).json()).toEqual({
      client: '127.0.0.1',
      origin: 'http://127.0.0.1:3000',
      publicOrigin: null,
      secureCookies: false,
    });
    expect((await (await request({ host: 'LOCALHOST.:3000' })).json()).origin).toBe('http://localhost.:3000');
    expect((await (await request({ host: '[::1]:3000', peer: '::ffff:127.0.0.1' })).json()).client).toBe('127.0.0.1');
  });

  it('forged forwarding headers from a peer that is not a trusted proxy change nothing', async () => {
    const { request } = guardedApp({ trustedProxies: ['10.0.0.1'], allowedHosts: ['support.example.com'] });
    const view = await (
      await request({
        host: '127.0.0.1:3000',
        peer: '127.0.0.1',
        headers: {
          'x-forwarded-for': '198.51.100.1',
          'x-forwarded-proto': 'https',
          'x-forwarded-host': 'support.example.com',
          forwarded: 'for=198.51.100.2;proto=https;host=support.example.com',
        },
      })
    ).json();
    expect(view).toEqual({ client: '127.0.0.1', origin: 'http://127.0.0.1:3000', publicOrigin: null, secureCookies: false });
  });

  it('behind a trusted TLS proxy without a public URL: origin and Secure cookies come from the proxy', async () => {
    const { request } = guardedApp({ trustedProxies: ['10.0.0.1'], allowedHosts: ['support.example.com'] });
    const view = await (
      await request({
        host: '127.0.0.1:3000',
        peer: '10.0.0.1',
        headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'support.example.com' },
      })
    ).json();
    expect(view).toEqual({ client: '203.0.113.7', origin: 'https://support.example.com', publicOrigin: null, secureCookies: true });
  });

  it('with a public URL: Secure cookies by its scheme and its origin is accepted, whatever the proxy says', async () => {
    const { request } = guardedApp({ publicUrl: 'https://support.example.com:8443' });
    const view = await (
      await request({ host: 'support.example.com:8443', peer: '127.0.0.1', headers: { 'x-forwarded-proto': 'http' } })
    ).json();
    expect(view).toEqual({
      client: '127.0.0.1',
      origin: 'http://support.example.com:8443',
      publicOrigin: 'https://support.example.com:8443',
      secureCookies: true,
    });
    const plain = guardedApp({ publicUrl: 'http://support.internal' });
    expect((await (await plain.request({ host: 'support.internal' })).json()).secureCookies).toBe(false);
  });

  it('the default port is left out of the origin, as browsers write it', async () => {
    const { request } = guardedApp({ trustedProxies: ['127.0.0.1'], allowedHosts: ['support.example.com'] });
    const view = await (await request({ host: 'support.example.com:443', headers: { 'x-forwarded-proto': 'https' } })).json();
    expect(view.origin).toBe('https://support.example.com');
  });
});
