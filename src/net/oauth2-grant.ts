/**
 * Obtaining a refresh token once, for `support-agent auth`: the device authorization grant
 * (RFC 8628) and the authorization code grant with PKCE (RFC 7636) through a browser redirect to
 * a listener on loopback (RFC 8252 section 7.3). Every provider answer is parsed with zod at the
 * edge; no token, code, verifier or secret ever appears in an error message. The runtime side
 * (trading the refresh token for access tokens) is src/net/oauth2-tokens.ts.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { maskSecrets } from './secret-echo.ts';

export interface OAuth2Client {
  clientId: string;
  /** Absent for public clients (Microsoft's device-code flow). */
  clientSecret?: string | undefined;
}

/** What a completed grant yields: the refresh token is what the agent keeps. */
export interface ObtainedGrant {
  refreshToken: string;
  accessToken: string;
  /** The scopes granted, when the provider says. */
  scope: string | undefined;
}

/** Time as the device flow sees it; tests pass a clock that does not wait. */
export interface FlowClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: FlowClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** A provider endpoint that does not answer in this time fails the command (run it again). */
const REQUEST_TIMEOUT_MS = 15_000;
/** Provider answers are a few kilobytes; anything far larger is not one. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** RFC 8628 section 3.2: the polling interval when the provider states none. */
const DEFAULT_INTERVAL_S = 5;
/** RFC 8628 section 3.5: each `slow_down` adds this much to the interval, for good. */
const SLOW_DOWN_STEP_MS = 5_000;
/** Never poll faster than this, whatever the provider states. */
const MIN_INTERVAL_MS = 1_000;

const printable = /^[\x20-\x7e]+$/;
const token = z.string().min(1).max(16_384);
const httpUrl = z
  .url({ protocol: /^https?$/ })
  // Re-serialised: control characters come out percent-encoded, never raw on the operator's terminal.
  .transform((url) => new URL(url).href);

const tokenGrant = z.object({
  access_token: token,
  refresh_token: token.optional(),
  scope: z.string().max(4096).regex(printable).optional(),
});
const errorAnswer = z.object({
  error: z.string().min(1).max(100),
  error_description: z.string().optional(),
});
const deviceAuthorization = z
  .object({
    device_code: token,
    user_code: z.string().min(1).max(64).regex(printable),
    verification_uri: httpUrl.optional(),
    // Google's name for it.
    verification_url: httpUrl.optional(),
    verification_uri_complete: httpUrl.optional(),
    expires_in: z.coerce.number().positive().max(86_400),
    interval: z.coerce.number().min(0).max(600).optional(),
  })
  .refine((d) => d.verification_uri ?? d.verification_url, 'no verification_uri');

/** What the operator is told to do during the device flow. */
export interface DevicePrompt {
  verificationUri: string;
  /** The same page with the code filled in, when the provider offers one. */
  verificationUriComplete: string | undefined;
  userCode: string;
  expiresInS: number;
}

/**
 * The device authorization grant: asks for a user code, shows it (`onPrompt`), then polls the token
 * endpoint at the stated interval (growing on `slow_down`) until the operator signs in, declines,
 * the code expires, or `timeoutMs` passes.
 */
export async function runDeviceFlow(options: {
  deviceUrl: string;
  tokenUrl: string;
  client: OAuth2Client;
  scope: string | undefined;
  timeoutMs: number;
  onPrompt(prompt: DevicePrompt): void;
  clock?: FlowClock;
}): Promise<ObtainedGrant> {
  const clock = options.clock ?? realClock;
  const started = clock.now();
  const request = clientForm(options.client);
  if (options.scope) request.set('scope', options.scope);
  const answer = await postForm(options.deviceUrl, request, 'device authorization endpoint');
  const refusal = answer.ok ? null : errorAnswer.safeParse(answer.json);
  if (refusal?.success) throw refused('device authorization endpoint', options.deviceUrl, refusal.data, clientSecrets(options.client));
  const device = deviceAuthorization.safeParse(answer.json);
  if (!answer.ok || !device.success)
    throw new AppError('AUTH_FAILED', `device authorization endpoint ${endpointName(options.deviceUrl)}: ${unexpected(answer.status)}`);
  const { device_code, user_code, expires_in } = device.data;
  options.onPrompt({
    verificationUri: (device.data.verification_uri ?? device.data.verification_url)!,
    verificationUriComplete: device.data.verification_uri_complete,
    userCode: user_code,
    expiresInS: expires_in,
  });

  const deadline = started + Math.min(options.timeoutMs, expires_in * 1000);
  let intervalMs = Math.max(MIN_INTERVAL_MS, (device.data.interval ?? DEFAULT_INTERVAL_S) * 1000);
  const poll = clientForm(options.client);
  poll.set('grant_type', 'urn:ietf:params:oauth:grant-type:device_code');
  poll.set('device_code', device_code);
  for (;;) {
    const left = deadline - clock.now();
    if (left <= 0) throw timedOut(options.timeoutMs, expires_in * 1000);
    await clock.sleep(Math.min(intervalMs, left));
    const { ok, status, json } = await postForm(options.tokenUrl, poll, 'token endpoint');
    const grant = ok ? tokenGrant.safeParse(json) : null;
    if (grant?.success) return withRefreshToken(grant.data);
    const error = errorAnswer.safeParse(json);
    if (!error.success) throw new AppError('AUTH_FAILED', `token endpoint ${endpointName(options.tokenUrl)}: ${unexpected(status)}`);
    switch (error.data.error) {
      case 'authorization_pending':
        continue;
      case 'slow_down':
        intervalMs += SLOW_DOWN_STEP_MS;
        continue;
      case 'access_denied':
        throw declined();
      case 'expired_token':
        throw new AppError('AUTH_FAILED', 'the code expired before the sign-in finished (expired_token): run the command again');
      default:
        throw refused('token endpoint', options.tokenUrl, error.data, [...clientSecrets(options.client), device_code]);
    }
  }
}

/** RFC 7636 S256: the base64url SHA-256 of the verifier. */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/**
 * The authorization code grant with PKCE: listens on 127.0.0.1 (a free port), shows the
 * authorization URL (`onPrompt`), waits at most `timeoutMs` for the browser's redirect with the
 * code and the same `state`, then trades the code for tokens. The listener is closed before this
 * returns, whatever happened.
 */
export async function runLoopbackFlow(options: {
  authUrl: string;
  tokenUrl: string;
  client: OAuth2Client;
  scope: string | undefined;
  /** Provider-specific parameters of the authorization request (Google: access_type, prompt). */
  extraParams?: Readonly<Record<string, string>>;
  timeoutMs: number;
  onPrompt(authorizationUrl: string): void;
}): Promise<ObtainedGrant> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(24).toString('base64url');
  const listener = await listenForRedirect(state, options.timeoutMs);
  try {
    const url = new URL(options.authUrl);
    const params: Record<string, string> = {
      ...options.extraParams,
      response_type: 'code',
      client_id: options.client.clientId,
      redirect_uri: listener.redirectUri,
      state,
      code_challenge: pkceChallenge(verifier),
      code_challenge_method: 'S256',
      ...(options.scope ? { scope: options.scope } : {}),
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    options.onPrompt(url.href);
    const code = await listener.code;
    const exchange = clientForm(options.client);
    exchange.set('grant_type', 'authorization_code');
    exchange.set('code', code);
    exchange.set('redirect_uri', listener.redirectUri);
    exchange.set('code_verifier', verifier);
    const { ok, status, json } = await postForm(options.tokenUrl, exchange, 'token endpoint');
    const grant = ok ? tokenGrant.safeParse(json) : null;
    if (grant?.success) return withRefreshToken(grant.data);
    const error = errorAnswer.safeParse(json);
    if (error.success)
      throw refused('token endpoint', options.tokenUrl, error.data, [...clientSecrets(options.client), code, verifier, state]);
    throw new AppError('AUTH_FAILED', `token endpoint ${endpointName(options.tokenUrl)}: ${unexpected(status)}`);
  } finally {
    listener.close();
  }
}

interface RedirectListener {
  redirectUri: string;
  /** The code of the first redirect that carried the right state; rejects on a wrong state, an error or the timeout. */
  code: Promise<string>;
  close(): void;
}

async function listenForRedirect(state: string, timeoutMs: number): Promise<RedirectListener> {
  let settle!: (outcome: { code: string } | { error: AppError }) => void;
  const outcome = new Promise<{ code: string } | { error: AppError }>((resolve) => (settle = resolve));
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    // Browsers also ask for /favicon.ico and may pre-connect; only the redirect itself counts.
    if (request.method !== 'GET' || url.pathname !== '/') return page(response, 404, 'Not found.');
    const query = url.searchParams;
    const code = query.get('code');
    const error = query.get('error');
    if (code === null && error === null) return page(response, 400, 'This address waits for the sign-in redirect.');
    if (!sameSecret(query.get('state') ?? '', state)) {
      page(response, 400, 'This redirect is not from the sign-in the command started. Run the command again.');
      return settle({
        error: new AppError(
          'AUTH_FAILED',
          'the redirect carried a wrong state (not the sign-in this command started): run the command again',
        ),
      });
    }
    if (error !== null) {
      page(response, 400, 'The sign-in did not complete. See the terminal.');
      return settle({ error: error === 'access_denied' ? declined() : refused('authorization endpoint', '', { error }, [state]) });
    }
    page(response, 200, 'Signed in. You can close this tab and return to the terminal.');
    settle({ code: code! });
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const timer = setTimeout(
    () =>
      settle({
        error: new AppError(
          'AUTH_FAILED',
          `no sign-in redirect within ${Math.round(timeoutMs / 1000)} s (--timeout): run the command again`,
        ),
      }),
    timeoutMs,
  );
  const code = outcome.then((result) => {
    clearTimeout(timer);
    // No more redirects accepted; the page already sent finishes on its own connection.
    server.close();
    server.closeIdleConnections();
    if ('error' in result) throw result.error;
    return result.code;
  });
  // Rejections are seen through `code`; this copy only keeps an unawaited one from being reported as unhandled.
  code.catch(() => {});
  return {
    redirectUri: `http://127.0.0.1:${port}/`,
    code,
    close() {
      clearTimeout(timer);
      server.close();
      server.closeAllConnections();
    },
  };
}

function page(response: ServerResponse, status: number, text: string): void {
  response
    .writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close', 'cache-control': 'no-store' })
    .end(`${text}\n`);
}

function sameSecret(got: string, expected: string): boolean {
  const a = Buffer.from(got);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function clientForm(client: OAuth2Client): URLSearchParams {
  const form = new URLSearchParams({ client_id: client.clientId });
  if (client.clientSecret) form.set('client_secret', client.clientSecret);
  return form;
}

/**
 * What a reflecting endpoint could echo of the client: its secret, and the id:secret pair as HTTP
 * Basic carries it (base64; the pair itself is not masked as such, the client id is no secret).
 */
function clientSecrets(client: OAuth2Client): string[] {
  if (!client.clientSecret) return [];
  return [client.clientSecret, Buffer.from(`${client.clientId}:${client.clientSecret}`, 'utf8').toString('base64')];
}

function withRefreshToken(grant: z.output<typeof tokenGrant>): ObtainedGrant {
  if (!grant.refresh_token)
    throw new AppError(
      'AUTH_FAILED',
      'the provider granted no refresh token (Microsoft: the scope needs offline_access; Google: access_type=offline with prompt=consent)',
    );
  return { refreshToken: grant.refresh_token, accessToken: grant.access_token, scope: grant.scope };
}

const declined = () => new AppError('AUTH_FAILED', 'the sign-in was declined (access_denied)');

function timedOut(timeoutMs: number, expiresMs: number): AppError {
  return timeoutMs <= expiresMs
    ? new AppError('AUTH_FAILED', `no sign-in within ${Math.round(timeoutMs / 1000)} s (--timeout): run the command again`)
    : new AppError('AUTH_FAILED', 'the code expired before the sign-in finished: run the command again');
}

/**
 * A provider's OAuth2 error, with the first line of its description (Microsoft's AADSTS codes help).
 * An endpoint that reflects the request would echo what was sent: every `secrets` value is masked
 * (before the text is cut, so no part of one survives the cut).
 */
function refused(
  what: string,
  url: string,
  answer: { error: string; error_description?: string | undefined },
  secrets: ReadonlyArray<string | undefined>,
): AppError {
  const clean = (text: string, max: number) =>
    maskSecrets(text, secrets)
      .split(/\r?\n/)[0]!
      .replace(/[^\x20-\x7e]/g, '?')
      .slice(0, max);
  const description = answer.error_description ? `: ${clean(answer.error_description, 200)}` : '';
  const where = url ? `${what} ${endpointName(url)}` : what;
  return new AppError('AUTH_FAILED', `${where} refused: ${clean(answer.error, 100)}${description}`, { detail: clean(answer.error, 100) });
}

function unexpected(status: number): string {
  return `unexpected answer (HTTP ${status}, not an OAuth2 response)`;
}

/** The endpoint's origin and path, for messages (never its query). */
function endpointName(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

async function postForm(url: string, form: URLSearchParams, what: string): Promise<{ ok: boolean; status: number; json: unknown }> {
  const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  const failed = (error: unknown) =>
    new AppError(
      'AUTH_FAILED',
      `${what} ${endpointName(url)}: ${error instanceof Error && error.name === 'TimeoutError' ? `no answer in ${REQUEST_TIMEOUT_MS} ms` : 'unreachable'}`,
    );
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form,
      // A token endpoint that redirects would carry the secret elsewhere.
      redirect: 'error',
      signal,
    });
  } catch (error) {
    throw failed(error);
  }
  let text: string;
  try {
    text = await readCapped(response);
  } catch (error) {
    if (error instanceof AppError) throw new AppError('AUTH_FAILED', `${what} ${endpointName(url)}: ${error.message}`);
    throw failed(error);
  }
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: the zod parse of null reports it.
  }
  return { ok: response.ok, status: response.status, json };
}

async function readCapped(response: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!response.body) return '';
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {});
      throw new AppError('AUTH_FAILED', `answer larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
