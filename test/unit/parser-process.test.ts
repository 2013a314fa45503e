/**
 * No exception inside a parser callback may reach the process: every hostile fixture and every
 * corpus mail is parsed in a child process that counts `uncaughtException` and
 * `unhandledRejection` (a canary proves the counting works). Outcomes must match the hostile
 * corpus's expectations: parsed, or kept as malformed with a reason.
 */
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/emails');
const CHILD = path.resolve(import.meta.dirname, '../support/parse-files-child.ts');

const report = z.object({
  canaryCaught: z.number(),
  escaped: z.array(z.string()),
  outcomes: z.record(z.string(), z.object({ ok: z.boolean(), reason: z.string().nullable(), repairs: z.array(z.string()) })),
});

function runChild(files: string[]): Promise<z.infer<typeof report>> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', CHILD, ...files],
      { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`child failed: ${error.message}\n${stderr}`));
        try {
          resolve(report.parse(JSON.parse(stdout.trim().split('\n').pop() ?? '')));
        } catch (parseError) {
          reject(new Error(`unreadable child report: ${String(parseError)}\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

async function emlFiles(folder: string): Promise<string[]> {
  return (await readdir(path.join(FIXTURES, folder)))
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((f) => path.join(FIXTURES, folder, f));
}

describe('parsing hostile mail in a process of its own', () => {
  it('lets no exception escape to the process, and keeps unparseable mail as malformed with a reason', async () => {
    const hostile = await emlFiles('hostile');
    const files = [...hostile, ...(await emlFiles('automated')), ...(await emlFiles('normal-lookalikes')), ...(await emlFiles('corpus'))];
    const result = await runChild(files);

    expect(result.canaryCaught).toBe(1);
    expect(result.escaped).toEqual([]);
    expect(Object.keys(result.outcomes)).toHaveLength(files.length);

    const expected = z
      .array(z.object({ file: z.string(), generated: z.boolean(), expect: z.enum(['processed', 'malformed', 'skipped']) }).passthrough())
      .parse(JSON.parse(await readFile(path.join(FIXTURES, 'hostile/expected.json'), 'utf8')))
      .filter((e) => !e.generated);
    const actual = Object.fromEntries(expected.map((e) => [e.file, result.outcomes[e.file]?.ok ? 'parsed' : 'malformed']));
    const wanted = Object.fromEntries(expected.map((e) => [e.file, e.expect === 'malformed' ? 'malformed' : 'parsed']));
    expect(actual).toEqual(wanted);
    for (const [file, outcome] of Object.entries(result.outcomes)) if (!outcome.ok) expect(outcome.reason, file).toMatch(/\S/);
  }, 150_000);
});
