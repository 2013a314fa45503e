/**
 * `npm run bench:cli`: how soon the command line answers. Runs `support-agent --help`, a usage
 * error and a bare `node -e 0` (the floor: Node's own start) one after another, warm (one run of
 * each first), and prints the median wall time of each and the ratio to the floor. The commands
 * load their modules lazily (src/cli/program.ts), so `--help` pays for tsx and commander only.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const RUNS = Number(process.env['BENCH_CLI_RUNS'] ?? 7);
const BIN = path.resolve(import.meta.dirname, '../bin/support-agent.js');

const CASES: Array<{ name: string; args: string[]; status: number }> = [
  { name: 'node -e 0 (floor)', args: ['-e', '0'], status: 0 },
  { name: 'support-agent --help', args: [BIN, '--help'], status: 0 },
  { name: 'support-agent frobnicate (usage error)', args: [BIN, 'frobnicate'], status: 2 },
];

function timeOnce(args: string[], expected: number): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { stdio: 'ignore', env: { PATH: process.env['PATH'] ?? '' } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== expected) throw new Error(`${args.join(' ')} exited ${String(result.status)}, expected ${expected}`);
  return ms;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const medians = CASES.map(({ name, args, status }) => {
  timeOnce(args, status);
  const times = Array.from({ length: RUNS }, () => timeOnce(args, status));
  return { name, ms: median(times) };
});
const floor = medians[0]!.ms;
for (const { name, ms } of medians) {
  process.stdout.write(`${name.padEnd(42)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / floor).toFixed(1).padStart(5)} × node\n`);
}
