/**
 * `support-agent auth` (the real command, in process) against the loopback provider when it
 * reflects the request into its refusal: the client secret, the device code and the id:secret
 * pair never reach the terminal, in whatever form and field the provider echoes them.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { startOAuth2Server, type OAuth2Server } from '../support/oauth2-server.ts';

const CLIENT = { clientId: 'agent-client', clientSecret: 'cs-7Q+/ab=c d"e\\f!é-2048-xyz', refreshToken: 'refresh-token-9c3e' };
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** Every form of `secret` whose eight-character piece must not appear. */
function forbidden(secret: string): string[] {
  const forms = [
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    b64(secret),
    JSON.stringify(secret).slice(1, -1),
  ];
  return forms.flatMap((form) => Array.from({ length: Math.max(0, form.length - 7) }, (_, i) => form.slice(i, i + 8)));
}

async function runAuth(args: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  let stderr = '';
  let stdout = '';
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  try {
    const code = await main(['auth', ...args]);
    return { code, stderr, stdout };
  } finally {
    err.mockRestore();
    out.mockRestore();
  }
}

type Render = (body: string, params: URLSearchParams) => unknown;
const secret = (params: URLSearchParams) => params.get('client_secret') ?? '';

const REFLECTIONS: Array<[string, Render]> = [
  ['the raw request body in error_description', (body) => ({ error: 'invalid_client', error_description: `Bad request: ${body}` })],
  [
    'the decoded secret in error_description',
    (_b, p) => ({ error: 'invalid_client', error_description: `client_secret '${secret(p)}' is wrong` }),
  ],
  ['the secret as the error code itself', (_b, p) => ({ error: secret(p).slice(0, 100) })],
  [
    'the secret in error_uri and in the description',
    (_b, p) => ({
      error: 'invalid_client',
      error_description: secret(p),
      error_uri: `https://x.example/?s=${encodeURIComponent(secret(p))}`,
    }),
  ],
  [
    'the JSON-escaped secret',
    (_b, p) => ({ error: 'invalid_client', error_description: `{"client_secret":${JSON.stringify(secret(p))}}` }),
  ],
  [
    'the secret in base64 (HTTP Basic of id:secret)',
    (_b, p) => ({ error: 'invalid_client', error_description: `Basic ${b64(`${p.get('client_id')}:${secret(p)}`)} rejected` }),
  ],
  [
    'the first characters of the secret',
    (_b, p) => ({ error: 'invalid_client', error_description: `secret starting ${secret(p).slice(0, 10)}... rejected` }),
  ],
  ['the secret at the 200-character cut', (_b, p) => ({ error: 'invalid_client', error_description: `${'x'.repeat(195)}${secret(p)}` })],
  [
    'lower-case percent-encoding',
    (body) => ({ error: 'invalid_client', error_description: body.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()) }),
  ],
  [
    'an extra JSON field next to the description',
    (_b, p) => ({ error: 'invalid_client', error_description: 'see request', request: { client_secret: secret(p) } }),
  ],
];

describe('support-agent auth never prints a reflected secret', () => {
  let provider: OAuth2Server;
  beforeAll(async () => {
    provider = await startOAuth2Server({ ...CLIENT, username: 'support@acme.example', lifetimeSeconds: 3600 });
  });
  afterAll(async () => {
    await provider?.close();
  });

  const args = () => [
    'custom',
    '--device-url',
    provider.deviceUrl,
    '--token-url',
    provider.tokenUrl,
    '--client-id',
    CLIENT.clientId,
    '--client-secret',
    CLIENT.clientSecret,
    '--timeout',
    '20s',
  ];

  it.each(REFLECTIONS)('device authorization endpoint reflecting %s', async (_name, render) => {
    provider.reflectNext(render);
    const run = await runAuth(args());
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/AUTH_FAILED: device authorization endpoint http:\/\/127\.0\.0\.1:\d+\/devicecode refused/);
    for (const piece of forbidden(CLIENT.clientSecret)) expect(run.stderr).not.toContain(piece);
  });

  it('token endpoint reflecting the device code and the secret while polling', async () => {
    provider.nextDevice(['pending'], { interval: 1 });
    let deviceCode = '';
    // The first poll is answered by the reflection.
    provider.reflectNext(
      (body, params) => {
        deviceCode = params.get('device_code') ?? '';
        return { error: 'server_error', error_description: `cannot handle ${body}` };
      },
      { path: '/token' },
    );
    const done = await runAuth(args());
    expect(done.code).toBe(1);
    expect(done.stderr).toContain('token endpoint');
    expect(done.stderr).toContain('refused: server_error');
    expect(deviceCode).toMatch(/^dc-/);
    for (const piece of [...forbidden(CLIENT.clientSecret), ...forbidden(deviceCode)]) expect(done.stderr).not.toContain(piece);
  });
});
