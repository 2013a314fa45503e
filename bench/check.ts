/**
 * `npm run bench:check`: the regression guard (issue 25). Runs the quick benchmark's phases named
 * in bench/floors.json (`bench/run.ts --quick --only …`, each phase in a process of its own) and
 * compares each listed figure's ratio with its committed floor or ceiling. A phase whose enforced
 * figure missed its bound runs once more and the better ratio counts (the machines are shared).
 * Exits 1 naming every figure that still fell outside its bound (or is missing because its phase
 * failed), 0 otherwise.
 *
 * Options: `--results FILE` compares an existing results file instead of running the benchmark;
 * `--floors FILE` (default bench/floors.json); `--phase-timeout SECONDS` (default 300: a loaded
 * machine is slow, and a phase killed by the timeout fails the check as "missing").
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { bestOf, checkFloors, describeVerdicts, floorsFileSchema, phasesToRetry } from './floors.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

function option(argv: readonly string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** Runs bench/run.ts with the floors' phases; resolves when it exits (its own exit code is not the verdict). */
function runBench(phases: readonly string[], out: string, timeoutSeconds: string): Promise<void> {
  const args = ['--import', 'tsx', path.join(HERE, 'run.ts'), '--quick', '--only', phases.join(','), '--phase-timeout', timeoutSeconds];
  const child = spawn(process.execPath, [...args, '--out', out], { stdio: 'inherit', cwd: path.resolve(HERE, '..') });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => resolve());
  });
}

const resultsSchema = z.object({
  date: z.string(),
  figures: z.array(z.object({ name: z.string(), ratio: z.number().nullable() }).passthrough()),
  failures: z.array(z.object({ phase: z.string(), error: z.string() })).default([]),
  durationSeconds: z.number().optional(),
});

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const floors = floorsFileSchema.parse(JSON.parse(await readFile(option(argv, '--floors') ?? path.join(HERE, 'floors.json'), 'utf8')));
  const given = option(argv, '--results');
  const timeout = option(argv, '--phase-timeout') ?? '300';
  const resultsFile = given ?? path.join(os.tmpdir(), `bench-check-${process.pid}.json`);
  if (!given) await runBench(floors.phases, resultsFile, timeout);
  const results = resultsSchema.parse(JSON.parse(await readFile(resultsFile, 'utf8')));
  let figures: ReadonlyArray<{ name: string; ratio: number | null }> = results.figures;
  const retry = given ? [] : phasesToRetry(floors, checkFloors(floors, figures));
  if (retry.length > 0) {
    // A loaded machine: the phases whose figures missed run once more; the better ratio counts.
    console.log(`\nbench:check: outside a bound in ${retry.join(', ')}; running it once more`);
    const again = path.join(os.tmpdir(), `bench-check-${process.pid}-again.json`);
    await runBench(retry, again, timeout);
    // A run that wrote nothing (it crashed) leaves the first run's figures to judge.
    const second = await readFile(again, 'utf8').then(
      (text) => resultsSchema.parse(JSON.parse(text)).figures,
      () => [],
    );
    figures = bestOf(floors, figures, second);
  }
  const { lines, failed } = describeVerdicts(checkFloors(floors, figures));
  console.log(`\nbench:check against bench/floors.json (results of ${results.date}, ${results.durationSeconds ?? '?'} s):`);
  for (const line of lines) console.log(`  ${line}`);
  for (const f of results.failures) console.log(`  phase ${f.phase} failed: ${f.error.split('\n')[0]}`);
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`bench:check: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  },
);
