/**
 * Provider texts with a reflected secret: every form a reflection takes is masked, ordinary text
 * is left alone.
 */
import { describe, expect, it } from 'vitest';
import { maskSecrets, SECRET_MASK } from '../../src/net/secret-echo.ts';

const SECRET = 'cs-7Q+/ab=c d"e\\f!é-2048';
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

describe('masking a reflected secret', () => {
  it.each([
    ['as sent', `invalid client_secret ${SECRET}`],
    ['percent-encoded', `body was client_secret=${encodeURIComponent(SECRET)}&client_id=x`],
    ['form-encoded (+ for space)', `body was ${new URLSearchParams({ client_secret: SECRET }).toString()}`],
    ['percent-encoded with lower-case hex', `got ${encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())}`],
    ['JSON-escaped', `{"client_secret":${JSON.stringify(SECRET)}}`],
    ['base64', `Authorization: Basic ${b64(SECRET)}`],
    ['base64 without padding', `token ${b64(SECRET).replace(/=+$/, '')}`],
    ['base64url', `token ${b64url(SECRET)}`],
    ['the first twelve characters', `secret '${SECRET.slice(0, 12)}...' is wrong`],
    ['the last ten characters', `ending in ${SECRET.slice(-10)}`],
    ['twice on one line', `${SECRET} and again ${SECRET}`],
    ['on the second line', `AADSTS7000215: invalid secret\nTrace: ${SECRET}`],
    ['in an error_uri', `https://login.example/error?client_secret=${encodeURIComponent(SECRET)}&x=1`],
  ])('%s', (_name, text) => {
    const masked = maskSecrets(text, [SECRET]);
    expect(masked).toContain(SECRET_MASK);
    for (const form of [SECRET, encodeURIComponent(SECRET), b64(SECRET), JSON.stringify(SECRET).slice(1, -1)]) {
      for (let i = 0; i + 8 <= form.length; i++) expect(masked).not.toContain(form.slice(i, i + 8));
    }
  });

  it.each([
    [
      'a refresh token',
      'rt-1-0123456789abcdef0123456789abcdef',
      'invalid_grant: refresh token rt-1-0123456789abcdef0123456789abcdef revoked',
    ],
    ['a device code', 'dc-deadbeefdeadbeefdeadbeefdeadbeef', 'bad device_code=dc-deadbeefdeadbeefdeadbeefdeadbeef'],
    ['an API key', 'sk-proj-AbCdEf0123456789', 'Incorrect API key provided: sk-proj-AbCdEf0123456789'],
    ['a password with spaces', 'correct horse battery staple', 'login failed for password correct horse battery staple'],
    ['a client id:secret pair in Basic', 'agent-client:s3cr3t-value', `Basic ${b64('agent-client:s3cr3t-value')}`],
  ])('%s', (_name, secret, text) => {
    const masked = maskSecrets(text, [secret]);
    expect(masked).not.toContain(secret);
    expect(masked).toContain(SECRET_MASK);
  });

  it.each([
    ['no secret given', 'invalid_client: Client authentication failed', []],
    ['an undefined secret (public client)', 'invalid_client: Client authentication failed', [undefined]],
    ['a secret that is not in the text', 'invalid_client: Client authentication failed', [SECRET]],
    ['a too-short value is not masked everywhere', 'invalid_client: abc abc', ['abc']],
  ])('leaves text alone: %s', (_name, text, secrets) => {
    expect(maskSecrets(text, secrets)).toBe(text);
  });

  it('leaves a long text of near-misses whole', () => {
    const text = `${SECRET.slice(0, 7)}x`.repeat(20_000);
    expect(maskSecrets(text, [SECRET])).toBe(text);
  });
});
