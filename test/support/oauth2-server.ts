/**
 * A provider's OAuth2 endpoints on loopback, for XOAUTH2 tests: a token endpoint that trades the
 * refresh token for access tokens (RFC 6749 section 6) and an introspection endpoint (RFC 7662)
 * that Dovecot's oauth2 passdb asks whether a token is valid and whose it is. The test decides
 * when a token stops being valid (`expire`), as a provider's clock would.
 *
 * For `support-agent auth`, it also grants refresh tokens: a device authorization endpoint
 * (RFC 8628) whose codes answer each poll as the test scripted (`nextDevice`), and an
 * authorization endpoint that redirects the "browser" back with a code or `access_denied`
 * (`nextAuthorization`), the code redeemable once with the PKCE verifier (RFC 7636 S256). A
 * refresh token it granted works at the token endpoint like the configured one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** How the token endpoint answers one poll of a device code. */
export type DevicePoll = 'pending' | 'slow_down' | 'approve' | 'deny' | 'expire';

/** A device-code or authorization-code request at the token endpoint. */
export interface GrantRequest {
  grantType: string;
  clientId: string;
  clientSecret: string;
  deviceCode: string;
  code: string;
  codeVerifier: string;
  redirectUri: string;
}

export interface OAuth2Server {
  /** http://127.0.0.1:port/token */
  tokenUrl: string;
  /** http://127.0.0.1:port/devicecode */
  deviceUrl: string;
  /** http://127.0.0.1:port/authorize */
  authorizeUrl: string;
  /** Device authorization requests (their form fields), in order. */
  deviceRequests: Array<Record<string, string>>;
  /** Authorization requests (their query), in order. */
  authorizeRequests: Array<Record<string, string>>;
  /** Device-code and authorization-code requests at the token endpoint, in order. */
  grantRequests: GrantRequest[];
  /** Refresh tokens granted by the device and authorization-code flows, in order. */
  granted: string[];
  /**
   * What the next device code answers to each poll, in order (the last answer repeats), and the
   * `interval` and `expires_in` it states. Default: approve at the first poll, interval 1, 600 s.
   */
  nextDevice(polls: DevicePoll[], stated?: { interval?: number; expiresIn?: number }): void;
  /** Whether the next authorization request is approved (a code) or declined (`access_denied`). */
  nextAuthorization(decision: 'approve' | 'deny'): void;
  /** http://127.0.0.1:port/introspect */
  introspectionUrl: string;
  /** Every token request, in order (grant type and the refresh token it carried). */
  tokenRequests: Array<{ grantType: string; refreshToken: string; clientId: string; clientSecret: string }>;
  /** Access tokens issued, in order. */
  issued: string[];
  /** Tokens Dovecot asked about, in order. */
  introspected: string[];
  /**
   * The next POST (device authorization or token request) is refused with the answer `render`
   * builds from the raw request body and its fields: a provider that reflects what it was sent.
   */
  reflectNext(
    render: (body: string, params: URLSearchParams) => unknown,
    options?: { status?: number; path?: '/token' | '/devicecode' },
  ): void;
  /** Whether the provider still accepts this access token for `user`. */
  isActive(user: string, token: string): boolean;
  /** The provider no longer accepts these access tokens (expired or revoked). */
  expire(...tokens: string[]): void;
  close(): Promise<void>;
}

export async function startOAuth2Server(options: {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  /** Whose mailbox the tokens open. */
  username: string;
  /** expires_in of each access token. */
  lifetimeSeconds: number;
  /** Also accept requests with no client secret at all (a public client, as with Microsoft's device flow). */
  publicClient?: boolean;
}): Promise<OAuth2Server> {
  const active = new Set<string>();
  const refreshTokens = new Set([options.refreshToken]);
  const state = {
    tokenRequests: [] as OAuth2Server['tokenRequests'],
    issued: [] as string[],
    introspected: [] as string[],
    deviceRequests: [] as OAuth2Server['deviceRequests'],
    authorizeRequests: [] as OAuth2Server['authorizeRequests'],
    grantRequests: [] as GrantRequest[],
    granted: [] as string[],
  };
  let deviceScript: { polls: DevicePoll[]; interval: number; expiresIn: number } = { polls: ['approve'], interval: 1, expiresIn: 600 };
  const devices = new Map<string, { polls: DevicePoll[]; done: boolean }>();
  let authorization: 'approve' | 'deny' = 'approve';
  const codes = new Map<string, { clientId: string; redirectUri: string; challenge: string }>();

  const clientOk = (clientId: string, clientSecret: string) =>
    clientId === options.clientId && (clientSecret === options.clientSecret || (options.publicClient === true && clientSecret === ''));

  function grant(response: ServerResponse): void {
    const accessToken = `at-${state.issued.length + 1}-${randomBytes(12).toString('hex')}`;
    const refreshToken = `rt-${state.granted.length + 1}-${randomBytes(16).toString('hex')}`;
    state.issued.push(accessToken);
    active.add(accessToken);
    state.granted.push(refreshToken);
    refreshTokens.add(refreshToken);
    json(response, 200, {
      access_token: accessToken,
      refresh_token: refreshToken,
      token_type: 'Bearer',
      expires_in: options.lifetimeSeconds,
    });
  }

  function codeGrant(response: ServerResponse, call: GrantRequest): void {
    const issued = codes.get(call.code);
    codes.delete(call.code);
    if (!issued || issued.clientId !== call.clientId || issued.redirectUri !== call.redirectUri)
      return json(response, 400, { error: 'invalid_grant' });
    const challenge = createHash('sha256').update(call.codeVerifier).digest('base64url');
    if (challenge !== issued.challenge)
      return json(response, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
    grant(response);
  }

  function devicePoll(response: ServerResponse, call: GrantRequest): void {
    const device = devices.get(call.deviceCode);
    if (!device || device.done) return json(response, 400, { error: 'invalid_grant' });
    const answer = device.polls.length > 1 ? device.polls.shift()! : device.polls[0]!;
    if (answer === 'approve') {
      device.done = true;
      return grant(response);
    }
    const error = { pending: 'authorization_pending', slow_down: 'slow_down', deny: 'access_denied', expire: 'expired_token' }[answer];
    json(response, 400, { error });
  }

  let reflection: { render: (body: string, params: URLSearchParams) => unknown; status: number; path: string | undefined } | null = null;

  async function form(request: IncomingMessage): Promise<{ body: string; params: URLSearchParams }> {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    return { body, params: new URLSearchParams(body) };
  }

  function json(response: ServerResponse, status: number, value: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  }

  const server = createServer((request, response) => {
    void (async () => {
      const { body, params } = await form(request);
      if (request.method === 'POST' && reflection && (reflection.path === undefined || reflection.path === request.url)) {
        const { render, status } = reflection;
        reflection = null;
        return json(response, status, render(body, params));
      }
      if (request.method === 'POST' && request.url === '/token' && params.get('grant_type') !== 'refresh_token') {
        const call: GrantRequest = {
          grantType: params.get('grant_type') ?? '',
          clientId: params.get('client_id') ?? '',
          clientSecret: params.get('client_secret') ?? '',
          deviceCode: params.get('device_code') ?? '',
          code: params.get('code') ?? '',
          codeVerifier: params.get('code_verifier') ?? '',
          redirectUri: params.get('redirect_uri') ?? '',
        };
        state.grantRequests.push(call);
        if (!clientOk(call.clientId, call.clientSecret)) return json(response, 401, { error: 'invalid_client' });
        if (call.grantType === 'urn:ietf:params:oauth:grant-type:device_code') return devicePoll(response, call);
        if (call.grantType === 'authorization_code') return codeGrant(response, call);
        return json(response, 400, { error: 'unsupported_grant_type' });
      }
      if (request.method === 'POST' && request.url === '/devicecode') {
        state.deviceRequests.push(Object.fromEntries(params));
        if (!clientOk(params.get('client_id') ?? '', params.get('client_secret') ?? ''))
          return json(response, 401, { error: 'invalid_client' });
        const deviceCode = `dc-${randomBytes(16).toString('hex')}`;
        devices.set(deviceCode, { polls: [...deviceScript.polls], done: false });
        return json(response, 200, {
          device_code: deviceCode,
          user_code: 'WDJB-MJHT',
          verification_uri: `http://127.0.0.1:${port}/device`,
          expires_in: deviceScript.expiresIn,
          interval: deviceScript.interval,
          message: 'To sign in, use a web browser to open the page and enter the code.',
        });
      }
      if (request.method === 'GET' && request.url?.startsWith('/authorize?')) {
        const query = Object.fromEntries(new URL(request.url, 'http://127.0.0.1').searchParams);
        state.authorizeRequests.push(query);
        const redirect = query['redirect_uri'] ?? '';
        if (
          query['client_id'] !== options.clientId ||
          query['response_type'] !== 'code' ||
          query['code_challenge_method'] !== 'S256' ||
          !query['code_challenge'] ||
          !/^http:\/\/127\.0\.0\.1:\d+\//.test(redirect)
        )
          return json(response, 400, { error: 'invalid_request' });
        const back = new URL(redirect);
        if (query['state'] !== undefined) back.searchParams.set('state', query['state']);
        if (authorization === 'deny') back.searchParams.set('error', 'access_denied');
        else {
          const code = `code-${randomBytes(12).toString('hex')}`;
          codes.set(code, { clientId: query['client_id'], redirectUri: redirect, challenge: query['code_challenge'] });
          back.searchParams.set('code', code);
        }
        authorization = 'approve';
        response.writeHead(302, { location: back.href }).end();
        return;
      }
      if (request.method === 'POST' && request.url === '/token') {
        const call = {
          grantType: params.get('grant_type') ?? '',
          refreshToken: params.get('refresh_token') ?? '',
          clientId: params.get('client_id') ?? '',
          clientSecret: params.get('client_secret') ?? '',
        };
        state.tokenRequests.push(call);
        if (!clientOk(call.clientId, call.clientSecret)) return json(response, 401, { error: 'invalid_client' });
        if (call.grantType !== 'refresh_token' || !refreshTokens.has(call.refreshToken))
          return json(response, 400, { error: 'invalid_grant' });
        const token = `at-${state.issued.length + 1}-${randomBytes(12).toString('hex')}`;
        state.issued.push(token);
        active.add(token);
        return json(response, 200, { access_token: token, token_type: 'Bearer', expires_in: options.lifetimeSeconds });
      }
      if (request.method === 'POST' && request.url === '/introspect') {
        const token = params.get('token') ?? '';
        state.introspected.push(token);
        return json(response, 200, active.has(token) ? { active: true, username: options.username } : { active: false });
      }
      json(response, 404, { error: 'not_found' });
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    tokenUrl: `http://127.0.0.1:${port}/token`,
    deviceUrl: `http://127.0.0.1:${port}/devicecode`,
    authorizeUrl: `http://127.0.0.1:${port}/authorize`,
    nextDevice: (polls, stated = {}) => {
      deviceScript = { polls, interval: stated.interval ?? 1, expiresIn: stated.expiresIn ?? 600 };
    },
    nextAuthorization: (decision) => {
      authorization = decision;
    },
    reflectNext: (render, { status = 400, path } = {}) => {
      reflection = { render, status, path };
    },
    introspectionUrl: `http://127.0.0.1:${port}/introspect`,
    ...state,
    isActive: (user, token) => user === options.username && active.has(token),
    expire: (...tokens) => tokens.forEach((t) => active.delete(t)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
