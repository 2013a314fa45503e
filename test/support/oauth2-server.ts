/**
 * A provider's OAuth2 endpoints on loopback, for XOAUTH2 tests: a token endpoint that trades the
 * refresh token for access tokens (RFC 6749 section 6) and an introspection endpoint (RFC 7662)
 * that Dovecot's oauth2 passdb asks whether a token is valid and whose it is. The test decides
 * when a token stops being valid (`expire`), as a provider's clock would.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface OAuth2Server {
  /** http://127.0.0.1:port/token */
  tokenUrl: string;
  /** http://127.0.0.1:port/introspect */
  introspectionUrl: string;
  /** Every token request, in order (grant type and the refresh token it carried). */
  tokenRequests: Array<{ grantType: string; refreshToken: string; clientId: string; clientSecret: string }>;
  /** Access tokens issued, in order. */
  issued: string[];
  /** Tokens Dovecot asked about, in order. */
  introspected: string[];
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
}): Promise<OAuth2Server> {
  const active = new Set<string>();
  const state = {
    tokenRequests: [] as OAuth2Server['tokenRequests'],
    issued: [] as string[],
    introspected: [] as string[],
  };

  async function form(request: IncomingMessage): Promise<URLSearchParams> {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    return new URLSearchParams(body);
  }

  function json(response: ServerResponse, status: number, value: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  }

  const server = createServer((request, response) => {
    void (async () => {
      const params = await form(request);
      if (request.method === 'POST' && request.url === '/token') {
        const call = {
          grantType: params.get('grant_type') ?? '',
          refreshToken: params.get('refresh_token') ?? '',
          clientId: params.get('client_id') ?? '',
          clientSecret: params.get('client_secret') ?? '',
        };
        state.tokenRequests.push(call);
        if (call.clientId !== options.clientId || call.clientSecret !== options.clientSecret)
          return json(response, 401, { error: 'invalid_client' });
        if (call.grantType !== 'refresh_token' || call.refreshToken !== options.refreshToken)
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
    introspectionUrl: `http://127.0.0.1:${port}/introspect`,
    ...state,
    isActive: (user, token) => user === options.username && active.has(token),
    expire: (...tokens) => tokens.forEach((t) => active.delete(t)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
