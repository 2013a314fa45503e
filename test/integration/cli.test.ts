import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/support-agent.js');
const COMMANDS = ['start', 'poll', 'work', 'console', 'replay', 'migrate', 'profile', 'thread', 'why', 'promote', 'facts', 'facts set', 'import', 'link', 'erase'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'] ?? '', HOME: os.tmpdir(), ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error && typeof error.code === 'number' ? error.code : error ? 1 : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sa-cli-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('the support-agent command line', () => {
  it.each(COMMANDS)('`%s --help` explains itself and exits 0', async (command) => {
    const writes: string[] = [];
    const original = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      expect(await main([...command.split(' '), '--help'])).toBe(0);
    } finally {
      process.stdout.write = original;
    }
    expect(writes.join('')).toMatch(new RegExp(`^Usage: support-agent ${command}`, 'm'));
  });

  it('rejects an unknown command and a bad flag with one line and exit code 2', async () => {
    const unknown = await run(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toEqual(["support-agent: unknown command 'frobnicate'"]);
    const flag = await run(['migrate', '--no-such-flag']);
    expect(flag.code).toBe(2);
    expect(flag.stderr.trim()).toBe("support-agent: unknown option '--no-such-flag'");
  });

  it('names a bad setting and exits 2, without a stack trace', async () => {
    const result = await run(['migrate'], { QUIET_AFTER: 'whenever' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/QUIET_AFTER/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('creates the embedded database on an empty DATA_DIR, and a second run is a no-op', async () => {
    const dataDir = path.join(await tempDir(), 'data');
    const first = await run(['migrate'], { DATA_DIR: dataDir });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Applied 1 migration\(s\) to .*\/pglite/);
    const second = await run(['migrate'], { DATA_DIR: dataDir });
    expect(second.stdout).toMatch(/is up to date/);
  }, 120_000);

  it('migrates PostgreSQL when DATABASE_URL is set, idempotently', async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const first = await run(['migrate'], { DATABASE_URL: db.url });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Applied 1 migration/);
    expect((await run(['migrate'], { DATABASE_URL: db.url })).stdout).toMatch(/is up to date/);
  }, 120_000);

  it('explains a bad replay path instead of crashing', async () => {
    const result = await run(['replay', '/no/such/folder'], { DATA_DIR: await tempDir() });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('support-agent: NOT_FOUND: /no/such/folder: no such file or folder');
  });

  it('says plainly when Redis is not there instead of waiting forever', async () => {
    const result = await run(['work'], { DATA_DIR: await tempDir(), REDIS_URL: 'redis://127.0.0.1:1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/REDIS_UNAVAILABLE: cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
  });
});
