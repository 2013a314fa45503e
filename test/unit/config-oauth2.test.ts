import { describe, expect, it } from 'vitest';
import { configSecrets } from '../../src/app/logging.ts';
import { loadConfig } from '../../src/config.ts';
import { isAppError } from '../../src/errors.ts';

function rejected(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (isAppError(error, 'CONFIG_INVALID')) return error.message;
    throw error;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('configuration: OAuth2 mail login', () => {
  it('is off by default: passwords as before', () => {
    expect(loadConfig({}).oauth2).toBeNull();
  });

  it('fills in the token endpoint for google and microsoft, and keeps an explicit one', () => {
    const base = { MAIL_AUTH: 'oauth2', OAUTH2_CLIENT_ID: 'id', OAUTH2_REFRESH_TOKEN: 'rt-secret' };
    expect(loadConfig({ ...base, OAUTH2_PROVIDER: 'google' }).oauth2?.tokenUrl).toBe('https://oauth2.googleapis.com/token');
    expect(loadConfig({ ...base, OAUTH2_PROVIDER: 'microsoft' }).oauth2?.tokenUrl).toBe(
      'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    );
    expect(loadConfig({ ...base, OAUTH2_TOKEN_URL: 'https://id.example.com/token' }).oauth2).toEqual({
      tokenUrl: 'https://id.example.com/token',
      clientId: 'id',
      clientSecret: undefined,
      refreshToken: 'rt-secret',
      scope: undefined,
    });
  });

  it('names each missing setting, never a value', () => {
    const message = rejected({ MAIL_AUTH: 'oauth2', OAUTH2_CLIENT_SECRET: 'cs-secret' });
    expect(message).toMatch(/OAUTH2_CLIENT_ID: required when MAIL_AUTH=oauth2/);
    expect(message).toMatch(/OAUTH2_REFRESH_TOKEN: required when MAIL_AUTH=oauth2/);
    expect(message).toMatch(/OAUTH2_TOKEN_URL: required when MAIL_AUTH=oauth2/);
    expect(message).not.toContain('cs-secret');
    expect(rejected({ MAIL_AUTH: 'oauth2', OAUTH2_PROVIDER: 'google', OAUTH2_CLIENT_ID: 'id' })).not.toMatch(/OAUTH2_TOKEN_URL/);
    expect(rejected({ OAUTH2_TOKEN_URL: 'ftp://x' })).toMatch(/OAUTH2_TOKEN_URL/);
  });

  it('masks the refresh token and the client secret in logs', () => {
    const config = loadConfig({
      MAIL_AUTH: 'oauth2',
      OAUTH2_PROVIDER: 'google',
      OAUTH2_CLIENT_ID: 'id',
      OAUTH2_CLIENT_SECRET: 'cs-secret',
      OAUTH2_REFRESH_TOKEN: 'rt-secret',
    });
    expect(configSecrets(config)).toEqual(expect.arrayContaining(['cs-secret', 'rt-secret']));
  });
});
