/**
 * OAuth2 access tokens for XOAUTH2 logins (IMAP and SMTP), from a refresh token at the provider's
 * token endpoint (RFC 6749 section 6). A token is reused until shortly before it expires, one
 * refresh runs at a time however many connections ask, and a token the server refused is never
 * handed out again. Neither the refresh token, the client secret nor an access token ever appears
 * in an error message.
 */
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { maskSecrets } from './secret-echo.ts';

export interface OAuth2Settings {
  tokenUrl: string;
  clientId: string;
  /** Absent for public clients (Microsoft's device-code flow without a secret). */
  clientSecret?: string | undefined;
  refreshToken: string;
  /** Space-separated; most providers keep the scopes of the original grant when it is absent. */
  scope?: string | undefined;
}

/** Hands out a valid access token; `invalidate` after a server refused one forces a refresh. */
export interface AccessTokenSource {
  accessToken(): Promise<string>;
  /** Drops `token` if it is still the current one (a refusal seen late does not drop a newer token). */
  invalidate(token: string): void;
}

/**
 * Refreshed this long before the stated expiry: a login that starts just before expiry still
 * carries a token the server accepts (clock skew, slow connection set-up).
 * @defaultValue 60 s
 */
const EXPIRY_MARGIN_MS = 60_000;
/** Providers state `expires_in`; a missing one is taken as this (Google and Microsoft grant an hour). */
const DEFAULT_LIFETIME_S = 3600;
/** A token endpoint that does not answer in this time fails the login; the caller retries later. */
const REQUEST_TIMEOUT_MS = 15_000;
/** A token response is a few kilobytes; anything far larger is not one. */
const MAX_RESPONSE_BYTES = 64 * 1024;

const tokenResponse = z.object({
  access_token: z.string().min(1),
  expires_in: z.coerce.number().positive().optional(),
  // Microsoft rotates refresh tokens: the new one must be used from now on.
  refresh_token: z.string().min(1).optional(),
});
const errorResponse = z.object({ error: z.string().max(100), error_description: z.string().optional() }).loose();

export function createAccessTokenSource(settings: OAuth2Settings, now: () => number = Date.now): AccessTokenSource {
  let refreshToken = settings.refreshToken;
  let current: { token: string; expiresAt: number } | null = null;
  let pending: Promise<string> | null = null;

  async function refresh(): Promise<string> {
    const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: settings.clientId });
    if (settings.clientSecret) body.set('client_secret', settings.clientSecret);
    if (settings.scope) body.set('scope', settings.scope);
    const startedAt = now();
    let response: Response;
    try {
      response = await fetch(settings.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer in ${REQUEST_TIMEOUT_MS} ms` : 'unreachable';
      throw new AppError('IMAP_FAILED', `OAuth2 token endpoint ${endpointName(settings.tokenUrl)}: ${reason}`);
    }
    const text = await readCapped(response);
    const json = parseJson(text);
    if (!response.ok) {
      const refused = errorResponse.safeParse(json);
      // invalid_grant: the refresh token was revoked or expired; only a new `support-agent auth` helps.
      // An endpoint that reflects the request would echo the secret or the refresh token in `error`.
      const error = refused.success
        ? maskSecrets(refused.data.error, [settings.clientSecret, refreshToken]).replace(/[^\x20-\x7e]/g, '?')
        : null;
      const what = error ?? `HTTP ${response.status}`;
      throw new AppError('IMAP_FAILED', `OAuth2 token endpoint ${endpointName(settings.tokenUrl)} refused the refresh: ${what}`, {
        detail: error ?? String(response.status),
      });
    }
    const parsed = tokenResponse.safeParse(json);
    if (!parsed.success)
      throw new AppError('IMAP_FAILED', `OAuth2 token endpoint ${endpointName(settings.tokenUrl)}: no access_token in the answer`);
    if (parsed.data.refresh_token) refreshToken = parsed.data.refresh_token;
    current = { token: parsed.data.access_token, expiresAt: startedAt + (parsed.data.expires_in ?? DEFAULT_LIFETIME_S) * 1000 };
    return current.token;
  }

  return {
    accessToken() {
      if (current && current.expiresAt - EXPIRY_MARGIN_MS > now()) return Promise.resolve(current.token);
      pending ??= refresh().finally(() => (pending = null));
      return pending;
    },
    invalidate(token) {
      if (current?.token === token) current = null;
    },
  };
}

/** The endpoint's origin and path, for messages (never its query, which could carry a secret). */
function endpointName(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

async function readCapped(response: Response): Promise<string> {
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_RESPONSE_BYTES) throw new AppError('IMAP_FAILED', `OAuth2 token endpoint answered with ${length} bytes`);
  const text = await response.text();
  if (text.length > MAX_RESPONSE_BYTES) throw new AppError('IMAP_FAILED', `OAuth2 token endpoint answered with ${text.length} bytes`);
  return text;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
