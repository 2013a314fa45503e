import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { runCliInProcess } from '../support/cli-run.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/support-agent.js');
const MIGRATIONS = path.resolve(import.meta.dirname, '../../prisma/migrations');
const migrationCount = async () => (await readdir(MIGRATIONS, { withFileTypes: true })).filter((e) => e.isDirectory()).length;
const COMMANDS = [
  'start',
  'poll',
  'work',
  'console',
  'replay',
  'migrate',
  'profile',
  'thread',
  'threads',
  'why',
  'promote',
  'facts',
  'facts set',
  'import',
  'link',
  'erase',
  'auth',
];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A migrate on a busy 2-core machine (PGlite and the schema engine are WebAssembly) can take most of a minute. */
const COMMAND_TIMEOUT_MS = 150_000;

/** The binary itself, for what only a process shows: its exit status, no stack trace, not hanging. */
function spawnCli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env['PATH'] ?? '', HOME: os.tmpdir(), ...env }, timeout: COMMAND_TIMEOUT_MS },
      (error, stdout, stderr) => {
        const code = error && typeof error.code === 'number' ? error.code : error ? 1 : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The command's logic in-process (test/support/cli-run.ts): the same main(), environment and output. */
const run = runCliInProcess;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sa-cli-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('the support-agent command line', { timeout: 2 * COMMAND_TIMEOUT_MS }, () => {
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
    const unknown = await spawnCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toEqual(["support-agent: unknown command 'frobnicate'"]);
    const flag = await spawnCli(['migrate', '--no-such-flag']);
    expect(flag.code).toBe(2);
    expect(flag.stderr.trim()).toBe("support-agent: unknown option '--no-such-flag'");
  });

  it('names a bad setting and exits 2, without a stack trace', async () => {
    const result = await spawnCli(['migrate'], { QUIET_AFTER: 'whenever' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/QUIET_AFTER/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it(
    'creates the embedded database on an empty DATA_DIR, and a second run is a no-op',
    async () => {
      const dataDir = path.join(await tempDir(), 'data');
      const first = await run(['migrate'], { DATA_DIR: dataDir });
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(new RegExp(`Applied ${await migrationCount()} migration\\(s\\) to .*/pglite`));
      const second = await run(['migrate'], { DATA_DIR: dataDir });
      expect(second.stdout).toMatch(/is up to date/);
    },
    2 * COMMAND_TIMEOUT_MS,
  );

  it(
    'migrates PostgreSQL when DATABASE_URL is set, idempotently',
    async () => {
      const db: TestDatabase = await createTestDatabase();
      cleanups.push(() => db.drop());
      const first = await run(['migrate'], { DATABASE_URL: db.url });
      expect(first.code).toBe(0);
      expect(first.stdout).toContain(`Applied ${await migrationCount()} migration(s)`);
      expect((await run(['migrate'], { DATABASE_URL: db.url })).stdout).toMatch(/is up to date/);
    },
    2 * COMMAND_TIMEOUT_MS,
  );

  it('explains a bad replay path instead of crashing', async () => {
    const result = await run(['replay', '/no/such/folder'], { DATA_DIR: await tempDir() });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('support-agent: NOT_FOUND: /no/such/folder: no such file or folder');
  });

  it(
    'an operator command on a folder without a database says so and creates nothing; replay --data-dir keeps one and refuses to overwrite it',
    async () => {
      const base = await tempDir();
      const empty = path.join(base, 'empty');
      const profile = await run(['profile', 'someone@example.com'], { DATA_DIR: empty });
      expect(profile.code).toBe(1);
      expect(profile.stderr.trim()).toBe(
        `support-agent: NOT_FOUND: no database in DATA_DIR=${empty}: set DATA_DIR to the folder the agent (or \`replay --data-dir\`) used, or DATABASE_URL`,
      );
      await expect(readdir(empty)).rejects.toThrow(/ENOENT/);

      const kept = path.join(base, 'kept');
      const corpus = path.resolve(import.meta.dirname, '../../fixtures/emails/corpus/001-gmail-invoice-double-charge-with-pdf.eml');
      const replay = await run(['replay', corpus, '--data-dir', kept, '--address', 'support@acme.example'], { DATA_DIR: empty });
      expect(replay.code).toBe(0);
      expect(replay.stderr).toContain(`DATA_DIR=${kept}`);
      const commitments = await run(['commitments', '--all'], { DATA_DIR: kept });
      expect(commitments.code).toBe(0);
      expect(commitments.stdout.trim()).toMatch(/^(No commitments\.|[A-Z]+ )/);
      const again = await run(['replay', corpus, '--data-dir', kept], { DATA_DIR: empty });
      expect(again.code).toBe(2);
      expect(again.stderr.trim()).toBe(`support-agent: USAGE: ${kept} already holds a database: give a new or empty folder`);
    },
    4 * COMMAND_TIMEOUT_MS,
  );

  it('says plainly when Redis is not there instead of waiting forever', async () => {
    const result = await spawnCli(['work'], { DATA_DIR: await tempDir(), REDIS_URL: 'redis://127.0.0.1:1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/REDIS_UNAVAILABLE: cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
  });
});

describe('the operator commands', () => {
  it(
    'import, facts set, profile, why, link and erase work on the configured database',
    async () => {
      const db: TestDatabase = await createTestDatabase({ migrated: true });
      cleanups.push(() => db.drop());
      const dir = await tempDir();
      const { writeFile } = await import('node:fs/promises');
      await writeFile(path.join(dir, 'crm.csv'), 'email,account_tier\nalice@example.com,premium\n');
      const env = { DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_PREFIX: `cli-${Date.now()}` };

      expect((await run(['import', path.join(dir, 'crm.csv')], env)).stdout).toMatch(/Imported 1 fact\(s\) for 1 customer\(s\)/);
      expect((await run(['facts', 'set', 'alice@example.com', 'preferred_contact_time', 'evenings'], env)).stdout).toMatch(
        /Set preferred_contact_time for e_/,
      );
      expect((await run(['link', 'alice.private@gmail.com', 'alice@example.com'], env)).stdout).toMatch(
        /alice\.private@gmail\.com now belongs to e_/,
      );

      const profile = JSON.parse((await run(['profile', 'alice.private@gmail.com'], env)).stdout) as Record<string, unknown>;
      expect(profile).toMatchObject({
        account_tier: 'premium',
        preferred_contact_time: 'evenings',
        addresses: ['alice.private@gmail.com', 'alice@example.com'],
      });

      const why = await run(['why', 'alice@example.com', 'account_tier'], env);
      expect(why.stdout).toMatch(/ACCEPTED {2}account_tier = "premium"/);
      expect(why.stdout).toMatch(/rule: trusted-import/);

      expect((await run(['erase', 'alice@example.com'], env)).code).toBe(2);
      const erased = await run(['erase', 'alice@example.com', '--yes', '--json'], env);
      const report = JSON.parse(erased.stdout) as { entityId: string; addresses: number; deleted: Record<string, number>; redis: unknown };
      expect(report).toMatchObject({
        entityId: expect.stringMatching(/^e_/),
        addresses: 2,
        deleted: { Entity: 1, EntityAddress: 2, ProfileFact: 2 },
      });
      expect(report.redis).toMatchObject({ jobsRemoved: 0 });
      // Counts only: the erased addresses are not echoed.
      expect(erased.stdout).not.toMatch(/alice/);
      const gone = await run(['profile', 'alice@example.com'], env);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toMatch(/no customer matches "alice@example\.com"/);
      await run(['import', path.join(dir, 'crm.csv')], env);
      const text = await run(['erase', 'alice@example.com', '--yes'], env);
      expect(text.stdout).toMatch(
        /^Erased e_\S+ \(1 address\(es\), 0 name\(s\)\)\.\nDeleted rows: .*Entity 1.*\nRedacted in other customers' data: nothing\.\n/,
      );
      expect(text.stdout).toMatch(/\nRedis: 0 job\(s\) removed, .* key\(s\) scanned\)\.\n$/);
    },
    6 * COMMAND_TIMEOUT_MS,
  );

  it('refuses a key that is not snake_case and an unknown category with one line, before touching the database', async () => {
    // No DATABASE_URL and an empty DATA_DIR: a command that got as far as the database would say so instead.
    const env = { DATA_DIR: await tempDir() };
    const key = await run(['facts', 'set', 'alice@example.com', 'Billing Address', '1 Main St'], env);
    expect(key.code).toBe(1);
    expect(key.stderr).toMatch(
      /^support-agent: INPUT_INVALID: key "Billing Address" is not snake_case: lower-case letters and digits joined by single underscores, at most 60 characters \(did you mean billing_address\?\)\n$/,
    );
    const category = await run(['facts', 'set', 'alice@example.com', 'plan', 'gold', '--category', 'bogus'], env);
    expect(category.code).toBe(2);
    expect(category.stderr).toBe(
      "support-agent: option '--category <category>' argument 'bogus' is invalid. Allowed choices are identity, preference, account, situation, sentiment, other.\n",
    );
  });

  it('`import --help` shows the CSV and JSON shapes with an example each', async () => {
    const writes: string[] = [];
    const original = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      expect(await main(['import', '--help'])).toBe(0);
    } finally {
      process.stdout.write = original;
    }
    const help = writes.join('');
    expect(help).toContain('email,account_tier,plan\n    alice@example.com,premium,annual');
    expect(help).toContain('email,key,value,category\n    alice@example.com,account_tier,premium,account');
    expect(help).toContain('[{"email": "alice@example.com", "account_tier": "premium", "plan": "annual"}]');
    expect(help).toContain('[{"email": "alice@example.com", "facts": {"account_tier": "premium"}}]');
  });

  it(
    'refuses to start with an invalid promotion policy, naming the problem',
    async () => {
      const dir = await tempDir();
      const { writeFile } = await import('node:fs/promises');
      await writeFile(path.join(dir, 'policy.json'), JSON.stringify({ version: '1', categories: {} }));
      const result = await run(
        ['replay', path.resolve(import.meta.dirname, '../../fixtures/emails/corpus/001-gmail-invoice-double-charge-with-pdf.eml')],
        {
          DATA_DIR: dir,
          PROMOTION_POLICY_FILE: path.join(dir, 'policy.json'),
        },
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/POLICY_INVALID: PROMOTION_POLICY_FILE .*policy\.json: /);
    },
    COMMAND_TIMEOUT_MS,
  );

  it(
    '`threads --tag` lists the threads carrying a tag (newest first), `--status` narrows them, a bad tag is refused',
    async () => {
      const dir = await tempDir();
      const data = path.join(dir, 'data');
      const corpus = path.resolve(import.meta.dirname, '../../fixtures/emails/corpus');
      const replayed = await run(
        [
          'replay',
          path.join(corpus, '001-gmail-invoice-double-charge-with-pdf.eml'),
          path.join(corpus, '007-outlook-web-password-reset.eml'),
          path.join(corpus, '009-outlook-android-changed-subject-footer.eml'),
          '--address',
          'support@acme.example',
          '--data-dir',
          data,
          '--no-settle',
        ],
        { LLM_PROVIDER: 'offline' },
      );
      expect(replayed.code).toBe(0);
      const env = { DATA_DIR: data, LLM_PROVIDER: 'offline' };
      const billing = JSON.parse((await run(['threads', '--tag', 'billing', '--json'], env)).stdout) as Array<Record<string, unknown>>;
      expect(billing.map((t) => t['subject'])).toEqual(['Invoice #4471 charged twice']);
      expect(billing[0]).toMatchObject({ status: 'open', customer: 'alice.okafor@gmail.com' });
      const access = await run(['threads', '--tag', 'account'], env);
      expect(access.stdout).toMatch(/^RESOLVED .*"Password reset not working".*\(thread t_/m);
      expect((await run(['threads', '--tag', 'account', '--status', 'open'], env)).stdout).toMatch(/^No open threads tagged account\./);
      const bad = await run(['threads', '--tag', 'Billing; DROP'], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/must be a snake_case tag/);
      // --mailbox: one mailbox's threads (with a tag or without), an unknown mailbox named with the known ones.
      const ofSupport = JSON.parse((await run(['threads', '--mailbox', 'Support@Acme.example', '--json'], env)).stdout) as Array<
        Record<string, unknown>
      >;
      expect(ofSupport.length).toBeGreaterThan(1);
      expect(new Set(ofSupport.map((t) => t['mailbox']))).toEqual(new Set(['support@acme.example']));
      expect((await run(['threads', '--mailbox', 'support@acme.example', '--tag', 'billing'], env)).stdout).toMatch(
        /"Invoice #4471 charged twice"/,
      );
      const unknown = await run(['threads', '--mailbox', 'billing@acme.example'], env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/no mailbox billing@acme\.example; known: support@acme\.example/);
      const neither = await run(['threads'], env);
      expect(neither.code).toBe(2);
      expect(neither.stderr).toMatch(/threads needs --tag <tag>, --mailbox <address>, or both/);
      expect((await run(['threads', '--mailbox', 'not an address'], env)).code).toBe(2);
    },
    4 * COMMAND_TIMEOUT_MS,
  );
});
