/**
 * Operator commands beside the running agent on the embedded database: `support-agent start` on
 * PGlite holds the database, and `import`, `facts set`, `profile`, `why`, `commitments` run from
 * another process are served by it over DATA_DIR/operator.sock. Also what a hostile or broken
 * client gets, and that the socket goes away with the agent.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteRedisPrefix } from '../support/agent-harness.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/support-agent.js');
const prefix = `opsock-${randomBytes(4).toString('hex')}`;
let dir: string;
let dataDir: string;
let agent: ChildProcess;
let agentLog = '';
let env: Record<string, string>;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** One raw exchange on the socket, as a hostile local client would try it. */
function raw(payload: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(path.join(dataDir, 'operator.sock'));
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

async function waitFor(what: string, probe: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; agent log:\n${agentLog}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sa-opsock-'));
  dataDir = path.join(dir, 'data');
  env = {
    PATH: process.env['PATH'] ?? '',
    HOME: os.tmpdir(),
    DATA_DIR: dataDir,
    REDIS_URL: 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: prefix,
    LLM_PROVIDER: 'offline',
    PROMOTION_POLICY_FILE: path.resolve(import.meta.dirname, '../../config/promotion-policy.json'),
  };
  agent = spawn(process.execPath, [BIN, 'start'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  agent.stdout!.on('data', (c: Buffer) => (agentLog += c.toString()));
  agent.stderr!.on('data', (c: Buffer) => (agentLog += c.toString()));
  await waitFor('the operator socket', () => existsSync(path.join(dataDir, 'operator.sock')) || agent.exitCode !== null);
  if (agent.exitCode !== null) throw new Error(`the agent exited: ${agentLog}`);
}, 180_000);

afterAll(async () => {
  if (agent && agent.exitCode === null) agent.kill('SIGKILL');
  await deleteRedisPrefix(prefix);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('operator commands beside the running agent (PGlite)', () => {
  it('serves import, facts set, profile, why and commitments while `start` holds the database', async () => {
    expect(statSync(path.join(dataDir, 'operator.sock')).mode & 0o777).toBe(0o600);
    await writeFile(path.join(dir, 'crm.csv'), 'email,account_tier\ndana@example.com,Business\n');
    // A relative file name: the agent reads the operator's file, not one in its own folder.
    const imported = await cli(['import', 'crm.csv']);
    expect(imported.stderr).toBe('');
    expect(imported.stdout).toMatch(/Imported 1 fact\(s\) for 1 customer\(s\)/);
    const set = await cli(['facts', 'set', 'dana@example.com', 'preferred_contact_time', 'mornings']);
    expect(set.code).toBe(0);
    const profile = await cli(['profile', 'dana@example.com']);
    expect(profile.code).toBe(0);
    expect(JSON.parse(profile.stdout)).toMatchObject({ account_tier: 'Business', preferred_contact_time: 'mornings' });
    const why = await cli(['why', 'dana@example.com', 'account_tier']);
    expect(why.stdout).toMatch(/ACCEPTED {2}account_tier = "Business"/);
    expect((await cli(['commitments'])).stdout.trim()).toBe('No open commitments.');
  }, 300_000);

  it('passes on the command’s own errors and exit codes', async () => {
    const missing = await cli(['profile', 'nobody@example.com']);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('support-agent: NOT_FOUND: no customer matches "nobody@example.com" (an entity id, key or address)');
    const usage = await cli(['why', 'dana@example.com', '--as-of', 'someday']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--as-of: "someday" is not a date/);
  }, 300_000);

  it('answers a broken or hostile client with an error and keeps serving', async () => {
    expect(JSON.parse(await raw('hello\n'))).toMatchObject({ code: 2, stderr: expect.stringMatching(/not a request/) });
    expect(JSON.parse(await raw(`${JSON.stringify({ argv: ['start'] })}\n`))).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/does not serve "start"/),
    });
    expect(JSON.parse(await raw(`${JSON.stringify({ argv: ['profile'], extra: true })}\n`))).toMatchObject({ code: 2 });
    expect(JSON.parse(await raw(Buffer.alloc(70 * 1024, 0x61)))).toMatchObject({ code: 2, stderr: expect.stringMatching(/too large/) });
    const served = JSON.parse(await raw(`${JSON.stringify({ argv: ['profile', 'dana@example.com'] })}\n`)) as {
      code: number;
      stdout: string;
    };
    expect(served.code).toBe(0);
    expect(JSON.parse(served.stdout)).toMatchObject({ account_tier: 'Business' });
  }, 120_000);

  it('removes the socket when the agent stops', async () => {
    const exited = new Promise<number | null>((resolve) => agent.once('exit', (code) => resolve(code)));
    agent.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(path.join(dataDir, 'operator.sock'))).toBe(false);
    // With the agent gone the command opens the database itself.
    const profile = await cli(['profile', 'dana@example.com']);
    expect(JSON.parse(profile.stdout)).toMatchObject({ preferred_contact_time: 'mornings' });
  }, 180_000);
});
