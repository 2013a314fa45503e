import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { isAppError } from '../../src/errors.ts';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (isAppError(error, 'CONFIG_INVALID')) return error.message;
    throw error;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('configuration', () => {
  it('runs on embedded defaults with an empty environment', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBeUndefined();
    expect(config.dataDir).toMatch(/\/data$/);
    expect(config.llm.provider).toBe('offline');
    expect(config.replyMode).toBe('draft');
    expect(config.memory.quietAfterMs).toBe(72 * 3_600_000);
    expect(config.memory.subjectWindowMs).toBe(14 * 86_400_000);
  });

  it('chooses the OpenAI provider when a key is set', () => {
    expect(loadConfig({ OPENAI_API_KEY: 'sk-test-123456' }).llm.provider).toBe('openai');
  });

  it('parses durations, lists and flags', () => {
    const config = loadConfig({ QUIET_AFTER: '48h', IMAP_FOLDERS: 'INBOX, Support ', IMAP_SECURE: 'false' });
    expect(config.memory.quietAfterMs).toBe(48 * 3_600_000);
    expect(config.imap.folders).toEqual(['INBOX', 'Support']);
    expect(config.imap.secure).toBe(false);
  });

  it('names the bad variable', () => {
    expect(configError({ QUIET_AFTER: 'soon' })).toMatch(/QUIET_AFTER/);
    expect(configError({ DATABASE_URL: 'mysql://x' })).toMatch(/DATABASE_URL/);
    expect(configError({ WORKER_CONCURRENCY: '-1' })).toMatch(/WORKER_CONCURRENCY/);
    expect(configError({ SUPPORT_ADDRESS: 'not an address' })).toMatch(/SUPPORT_ADDRESS/);
    expect(configError({ REPLY_MODE: 'send' })).toMatch(/SMTP_HOST/);
  });

  it('never echoes a secret value in its error', () => {
    const message = configError({ MESSAGE_ID_SECRET: 'short-s3cret', WORKER_CONCURRENCY: 'x' });
    expect(message).toMatch(/MESSAGE_ID_SECRET/);
    expect(message).not.toContain('short-s3cret');
  });
});

describe('.env.example', () => {
  it('documents every setting the product reads', async () => {
    const { readFile } = await import('node:fs/promises');
    const { CONFIG_VARIABLES } = await import('../../src/config.ts');
    const text = await readFile(new URL('../../.env.example', import.meta.url), 'utf8');
    const documented = new Set([...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));
    expect(CONFIG_VARIABLES.filter((name) => !documented.has(name))).toEqual([]);
  });
});
