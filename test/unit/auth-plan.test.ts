// `support-agent auth`: which flow and endpoints each provider gets, the settings it prints, PKCE.
import { describe, expect, it } from 'vitest';
import { planAuth, settingsLines, type AuthPlan } from '../../src/cli/commands/auth.ts';
import { loadOAuth2Client } from '../../src/config.ts';
import { isAppError } from '../../src/errors.ts';
import { pkceChallenge } from '../../src/net/oauth2-grant.ts';

function usageError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isAppError(error, 'USAGE')) return error.message;
    throw error;
  }
  throw new Error('expected a usage error');
}

const grant = { refreshToken: 'rt-1.abc_DEF-ghi', accessToken: 'at-1', scope: undefined };

describe('auth plan', () => {
  it('microsoft: device code at the common tenant with IMAP, SMTP and offline_access, no secret needed', () => {
    const plan = planAuth('microsoft', {}, { clientId: 'app-id' });
    expect(plan).toEqual({
      flow: 'device',
      client: { clientId: 'app-id' },
      tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      authUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      deviceUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/devicecode',
      scope: 'offline_access https://outlook.office.com/IMAP.AccessAsUser.All https://outlook.office.com/SMTP.Send',
      extraParams: {},
    });
  });

  it('microsoft: a tenant goes into every endpoint; the redirect flow can be chosen', () => {
    const plan = planAuth('microsoft', { tenant: 'contoso.onmicrosoft.com', flow: 'loopback' }, { clientId: 'app-id' });
    expect(plan.flow).toBe('loopback');
    expect(plan.tokenUrl).toBe('https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token');
    expect(plan.authUrl).toBe('https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize');
  });

  it.each(['../evil', 'a/b', 'x?y=1', '', 'tenant with space', 'a'.repeat(101)])('microsoft: refuses the tenant %j', (tenant) => {
    expect(usageError(() => planAuth('microsoft', { tenant }, { clientId: 'app-id' }))).toMatch(/--tenant must be/);
  });

  it('google: loopback redirect with offline access and fresh consent; the secret is required', () => {
    const plan = planAuth('google', {}, { clientId: 'id.apps.googleusercontent.com', clientSecret: 'GOCSPX-1' });
    expect(plan).toMatchObject({
      flow: 'loopback',
      authUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      scope: 'https://mail.google.com/',
      extraParams: { access_type: 'offline', prompt: 'consent' },
    });
    expect(usageError(() => planAuth('google', {}, { clientId: 'id' }))).toMatch(/google needs --client-secret or OAUTH2_CLIENT_SECRET/);
  });

  it("google: no device flow (Google's grants no mail scope) unless a device endpoint is named", () => {
    const env = { clientId: 'id', clientSecret: 's' };
    expect(usageError(() => planAuth('google', { flow: 'device' }, env))).toMatch(/does not grant mail scopes/);
    expect(planAuth('google', { flow: 'device', deviceUrl: 'http://127.0.0.1:1/dc' }, env).flow).toBe('device');
  });

  it('options win over the environment; the environment fills in', () => {
    expect(planAuth('microsoft', { clientId: 'cli' }, { clientId: 'env', clientSecret: 'env-secret' }).client).toEqual({
      clientId: 'cli',
      clientSecret: 'env-secret',
    });
    expect(usageError(() => planAuth('microsoft', {}, {}))).toMatch(/needs --client-id or OAUTH2_CLIENT_ID/);
  });

  it('custom: the flow follows the endpoint given; a token endpoint is required; --tenant is refused', () => {
    const env = { clientId: 'id' };
    expect(planAuth('custom', { tokenUrl: 'https://p.example/t', deviceUrl: 'https://p.example/d' }, env).flow).toBe('device');
    expect(planAuth('custom', { tokenUrl: 'https://p.example/t', authUrl: 'https://p.example/a' }, env).flow).toBe('loopback');
    const both = { tokenUrl: 'https://p.example/t', authUrl: 'https://p.example/a', deviceUrl: 'https://p.example/d' };
    expect(planAuth('custom', { ...both, flow: 'loopback' }, env).flow).toBe('loopback');
    expect(usageError(() => planAuth('custom', { authUrl: 'https://p.example/a' }, env))).toMatch(/needs --token-url/);
    expect(usageError(() => planAuth('custom', { tokenUrl: 'https://p.example/t' }, env))).toMatch(/--device-url .* or --auth-url/);
    expect(usageError(() => planAuth('custom', { tokenUrl: 'https://p.example/t', flow: 'device' }, env))).toMatch(/needs --device-url/);
    expect(usageError(() => planAuth('custom', { ...both, tenant: 'x' }, env))).toMatch(/--tenant is for microsoft only/);
  });
});

describe('auth settings', () => {
  const plan = (over: Partial<AuthPlan>): AuthPlan => ({
    flow: 'device',
    client: { clientId: 'app-id' },
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    authUrl: undefined,
    deviceUrl: undefined,
    scope: undefined,
    extraParams: {},
    ...over,
  });

  it('microsoft at the common tenant: the lines the README documents, with the scope repeated for refreshes', () => {
    expect(settingsLines('microsoft', plan({ scope: 'offline_access https://outlook.office.com/IMAP.AccessAsUser.All' }), grant)).toBe(
      [
        'MAIL_AUTH=oauth2',
        'OAUTH2_PROVIDER=microsoft',
        'OAUTH2_CLIENT_ID=app-id',
        "OAUTH2_SCOPE='offline_access https://outlook.office.com/IMAP.AccessAsUser.All'",
        'OAUTH2_REFRESH_TOKEN=rt-1.abc_DEF-ghi',
        '',
      ].join('\n'),
    );
  });

  it('a token endpoint other than the provider default is named; the secret is never printed', () => {
    const text = settingsLines(
      'google',
      plan({
        tokenUrl: 'http://127.0.0.1:9/token',
        client: { clientId: 'id', clientSecret: 'GOCSPX-secret' },
        scope: 'https://mail.google.com/',
      }),
      grant,
    );
    expect(text).toContain('OAUTH2_TOKEN_URL=http://127.0.0.1:9/token\n');
    expect(text).toContain('# OAUTH2_CLIENT_SECRET: the client secret used here (not printed)\n');
    expect(text).not.toContain('GOCSPX-secret');
    expect(text).not.toContain('OAUTH2_SCOPE');
  });

  it('quotes values a shell or .env file would split or expand', () => {
    const text = settingsLines('custom', plan({ tokenUrl: 'https://p.example/t' }), { ...grant, refreshToken: "a b'$(rm -rf)`x`" });
    expect(text).toContain(`OAUTH2_REFRESH_TOKEN='a b'\\''$(rm -rf)\`x\`'\n`);
  });
});

describe('PKCE', () => {
  it('S256 matches RFC 7636 appendix B', () => {
    expect(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });
});

describe('the OAuth2 client from the environment', () => {
  it('reads only the client id and secret, whatever else is set or missing', () => {
    expect(loadOAuth2Client({ MAIL_AUTH: 'oauth2', OAUTH2_CLIENT_ID: 'id', OAUTH2_CLIENT_SECRET: 's', IMAP_PORT: 'bad' })).toEqual({
      clientId: 'id',
      clientSecret: 's',
    });
    expect(loadOAuth2Client({ OAUTH2_CLIENT_ID: '', OAUTH2_CLIENT_SECRET: '' })).toEqual({});
  });
});
