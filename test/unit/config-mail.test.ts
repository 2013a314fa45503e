import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { isAppError } from '../../src/errors.ts';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/ingest/ingest-message.ts';
import { DEFAULT_PARSE_SETTINGS } from '../../src/ingest/parse-pool.ts';

function rejected(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (isAppError(error, 'CONFIG_INVALID')) return error.message;
    throw error;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('configuration: reading mail', () => {
  it('defaults to the ingestion defaults', () => {
    const { mail } = loadConfig({});
    expect(mail.maxMessageBytes).toBe(DEFAULT_MAX_MESSAGE_BYTES);
    expect(mail.parsing).toEqual(DEFAULT_PARSE_SETTINGS);
  });

  it.each([
    ['52428800', 52_428_800],
    ['40MiB', 40 * 1024 * 1024],
    ['25MB', 25_000_000],
    ['25 mb', 25_000_000],
    ['512KiB', 512 * 1024],
    ['1.5GiB', 1.5 * 1024 ** 3],
    ['100b', 100],
  ])('reads MAX_MESSAGE_BYTES=%s as %d bytes', (value, bytes) => {
    expect(loadConfig({ MAX_MESSAGE_BYTES: value }).mail.maxMessageBytes).toBe(bytes);
  });

  it.each(['0', '-5MB', 'lots', '10 MBytes', '1e9', '5TB'])('refuses MAX_MESSAGE_BYTES=%s, naming it', (value) => {
    expect(rejected({ MAX_MESSAGE_BYTES: value })).toMatch(/MAX_MESSAGE_BYTES/);
  });

  it('reads the parse worker settings and refuses nonsense', () => {
    expect(loadConfig({ PARSE_WORKERS: '0', PARSE_TIMEOUT: '5s', PARSE_WORKER_MEMORY: '256' }).mail.parsing).toEqual({
      workers: 0,
      timeoutMs: 5_000,
      memoryMb: 256,
    });
    expect(rejected({ PARSE_WORKERS: '-1' })).toMatch(/PARSE_WORKERS/);
    expect(rejected({ PARSE_TIMEOUT: 'forever' })).toMatch(/PARSE_TIMEOUT/);
    expect(rejected({ PARSE_WORKER_MEMORY: '8' })).toMatch(/PARSE_WORKER_MEMORY/);
  });
});

describe('configuration: how replies look and who they go to', () => {
  it('defaults: no signature, the original quoted, Cc kept, at most 10', () => {
    expect(loadConfig({}).reply).toEqual({ signature: '', quoteOriginal: true, keepCc: 'all', ccMax: 10 });
  });

  it('reads a signature with \\n line breaks, and the Cc modes', () => {
    expect(loadConfig({ REPLY_SIGNATURE: '  Acme Support\\nhttps://acme.example  ' }).reply.signature).toBe(
      'Acme Support\nhttps://acme.example',
    );
    expect(loadConfig({ REPLY_KEEP_CC: 'customer' }).reply.keepCc).toBe('customer');
    expect(loadConfig({ REPLY_KEEP_CC: 'false' }).reply.keepCc).toBe('none');
    expect(loadConfig({ REPLY_KEEP_CC: 'yes' }).reply.keepCc).toBe('all');
    expect(loadConfig({ REPLY_QUOTE_ORIGINAL: 'no' }).reply.quoteOriginal).toBe(false);
  });

  it.each([
    ['REPLY_KEEP_CC', 'everyone'],
    ['REPLY_CC_MAX', '0'],
    ['REPLY_CC_MAX', '500'],
    ['REPLY_SIGNATURE', 'x'.repeat(2001)],
    ['REPLY_QUOTE_ORIGINAL', 'maybe'],
  ])('refuses %s=%s, naming it', (name, value) => {
    expect(rejected({ [name]: value })).toMatch(new RegExp(name));
  });
});
