/**
 * A newcomer is never misled about the model (issue 31): `OPENAI_BASE_URL` alone selects the
 * OpenAI-compatible provider (a local server needs no key) and every drafting command names the
 * model it uses; a dead or failing model makes `eval` and `replay` exit non-zero with one line,
 * and no score is computed from the notes left for a person; `.env` is read (the environment
 * wins); `kb import` and `stats` refuse what they cannot use. Through the real binary and the real
 * `openai` client against the scripted server.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnAnswer } from '../support/agent-harness.ts';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/support-agent.js');
const CORPUS = path.resolve(import.meta.dirname, '../../fixtures/emails/corpus');
const HISTORY = path.resolve(import.meta.dirname, '../../fixtures/eval/history.mbox');
const SENT = path.resolve(import.meta.dirname, '../../fixtures/eval/sent.mbox');
const TIMEOUT_MS = 150_000;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string>, cwd?: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env['PATH'] ?? '', HOME: os.tmpdir(), ...env }, cwd, timeout: TIMEOUT_MS },
      (error, stdout, stderr) => resolve({ code: error && typeof error.code === 'number' ? error.code : error ? 1 : 0, stdout, stderr }),
    );
  });
}

let llm: ScriptedLlmServer;
let dir: string;

beforeAll(async () => {
  llm = await startScriptedLlmServer();
  dir = await mkdtemp(path.join(os.tmpdir(), 'sa-model-honesty-'));
});
afterAll(async () => {
  await llm.close();
  await rm(dir, { recursive: true, force: true });
});

describe('an honest model', { timeout: 2 * TIMEOUT_MS }, () => {
  it('OPENAI_BASE_URL from .env alone selects the model (no key); the command names it; the environment wins over .env', async () => {
    llm.reset();
    llm.setFallback(() => ({ kind: 'json', content: turnAnswer() }));
    const cwd = path.join(dir, 'with-env');
    await mkdir(cwd);
    await writeFile(path.join(cwd, '.env'), `OPENAI_BASE_URL=${llm.url}\nOPENAI_MODEL=model-from-file\nLLM_PROVIDER=auto\n`);
    const result = await run(
      ['replay', path.join(CORPUS, '007-outlook-web-password-reset.eml'), '--address', 'support@acme.example', '--no-settle'],
      { OPENAI_MODEL: 'model-from-env' },
      cwd,
    );
    expect(result.stderr.split('\n')[0]).toBe(
      `replay: model: model-from-env at ${llm.url.replace(/\/$/, '')} (OpenAI-compatible, without a key)`,
    );
    expect(result.code).toBe(0);
    const turns = llm.requests.filter((r) => r.schemaName === 'message_turn');
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.every((r) => r.body.model === 'model-from-env')).toBe(true);
  });

  it('replay against a failing model writes its report, marks the turns, and exits 1 with one line', async () => {
    llm.reset();
    llm.setFallback(() => ({ kind: 'status', status: 503 }));
    const report = path.join(dir, 'failing-replay.json');
    const result = await run(
      ['replay', path.join(CORPUS, '007-outlook-web-password-reset.eml'), '--address', 'support@acme.example', '--report', report],
      { OPENAI_BASE_URL: llm.url, OPENAI_MAX_RETRIES: '0', DATA_DIR: path.join(dir, 'unused') },
    );
    expect(result.code).toBe(1);
    const last = result.stderr.trim().split('\n').at(-1);
    expect(last).toMatch(
      /^support-agent: LLM_UNAVAILABLE: \d+ turns or promotion passes failed \(.*LLM_UNAVAILABLE.*\); see "failures" in the report$/,
    );
    const written = JSON.parse(await readFile(report, 'utf8')) as { failures: Array<{ stage: string }>; drafts: unknown[] };
    expect(written.failures.some((f) => f.stage === 'turn')).toBe(true);
  });

  it('eval against an unreachable model exits 1, scores nothing, and lists every affected mail', async () => {
    const report = path.join(dir, 'dead-eval.json');
    const result = await run(['eval', HISTORY, '--sent', SENT, '--address', 'support@acme.example', '--report', report], {
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_MAX_RETRIES: '0',
      DATA_DIR: path.join(dir, 'unused'),
    });
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe('eval: model: gpt-4o-mini at http://127.0.0.1:9/v1 (OpenAI-compatible, without a key)');
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      /^support-agent: LLM_UNAVAILABLE: (\d+) of \1 answered mails got no draft from the model \(.+\); they are listed under "modelFailures" and left out of every score$/,
    );
    const written = JSON.parse(await readFile(report, 'utf8')) as { pairs: unknown[]; answered: number; modelFailures: unknown[] };
    expect(written.pairs).toEqual([]);
    expect(written.modelFailures).toHaveLength(written.answered);
    expect(result.stdout).toMatch(/similarity to the team reply, mean +-/);
  });
});

describe('input a command cannot use is refused', { timeout: 2 * TIMEOUT_MS }, () => {
  it('kb import of a folder without a supported file lists each file and exits 1', async () => {
    const kb = path.join(dir, 'not-docs');
    await mkdir(kb);
    await writeFile(path.join(kb, 'photo.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0]));
    await writeFile(path.join(kb, 'data.json'), '{"a":1}');
    const result = await run(['kb', 'import', kb], { DATA_DIR: path.join(dir, 'kb-data') });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('0 new, 0 updated, 0 unchanged, 0 removed, 2 skipped');
    expect(result.stdout).toContain('skipped data.json: not a Markdown, HTML, text or PDF file');
    expect(result.stdout).toContain('skipped photo.jpg: not a Markdown, HTML, text or PDF file');
    expect(result.stderr.trim()).toBe(`support-agent: INPUT_INVALID: no document read from ${kb} (2 skipped, see above)`);
  });

  it('stats --since without a unit exits 2 with the expected form', async () => {
    const result = await run(['stats', '--since', '7'], { DATA_DIR: path.join(dir, 'stats-data') });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('support-agent: USAGE: --since: "7" is not a duration with a unit, like 7d, 72h or 2w');
  });

  it('replay of files that are not mail exits 1, naming them', async () => {
    const folder = path.join(dir, 'not-mail');
    await mkdir(folder);
    await writeFile(path.join(folder, 'a.eml'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
    await writeFile(path.join(folder, 'b.eml'), 'just some words\nwithout any headers\n');
    const result = await run(['replay', folder, '--address', 'support@acme.example'], {
      DATA_DIR: path.join(dir, 'unused'),
      LLM_PROVIDER: 'offline',
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      /^support-agent: INPUT_INVALID: no mail could be read: 2 file\(s\), each skipped \(a\.eml: \S+; b\.eml: \S+\)$/,
    );
  });
});
