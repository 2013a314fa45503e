/**
 * `npm run bench` (about 10 minutes) or `npm run bench -- --quick` (under two minutes): runs every
 * phase in a child process of its own, prints the table and writes bench/results/latest.json.
 * Options: `--quick`, `--seed N` (default 1), `--only phase[,phase…]`, `--phase-timeout SECONDS` (default
 * 100 quick, 1,200 full: a phase still running then is killed and reported failed), `--out FILE` (default
 * bench/results/latest.json). See bench/README.md.
 * Missing a target is a result, not an error; the exit code is non-zero only when a phase failed.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPhase, sweep, type PhaseOptions, type Resource } from './phase-process.ts';
import { machine, renderTable, round, type Figure, type PhaseResult, type Results } from './report.ts';

const PHASES = [
  'ingestion-postgresql',
  'ingestion-pglite',
  'context-size',
  'worker-throughput',
  'latency',
  'initial-sync',
  'hostile-mail',
  'knowledge',
  'promotion-cadence',
  'attachments',
  'scale-out',
] as const;
type Phase = (typeof PHASES)[number];
/**
 * Phases in a group run side by side. Only phases whose figures cannot depend on the machine's
 * load share a group: context size counts tokens, the initial sync reports its own process's RSS.
 * Everything timed runs alone.
 */
const GROUPS: ReadonlyArray<readonly Phase[]> = [
  ['ingestion-postgresql'],
  ['ingestion-pglite'],
  ['worker-throughput'],
  ['latency'],
  ['initial-sync', 'context-size', 'promotion-cadence'],
  ['hostile-mail'],
  ['knowledge'],
  ['attachments'],
  ['scale-out'],
];
const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');

function parseArgs(argv: string[]): { quick: boolean; seed: number; only: string[]; phaseTimeoutMs: number; out: string } {
  const quick = argv.includes('--quick');
  const at = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const seed = Number(at('--seed') ?? '1');
  if (!Number.isInteger(seed) || seed < 0) throw new Error('--seed takes a non-negative integer');
  const only = (at('--only') ?? '').split(',').filter(Boolean);
  for (const name of only) {
    if (!(PHASES as readonly string[]).includes(name)) throw new Error(`--only: unknown phase "${name}"; phases: ${PHASES.join(', ')}`);
  }
  const timeout = Number(at('--phase-timeout') ?? (quick ? '100' : '1200'));
  if (!Number.isFinite(timeout) || timeout <= 0) throw new Error('--phase-timeout takes a positive number of seconds');
  return { quick, seed, only, phaseTimeoutMs: timeout * 1000, out: path.resolve(at('--out') ?? RESULTS) };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const runId = randomBytes(4).toString('hex');
  const options: PhaseOptions = { quick: args.quick, seed: args.seed, runId };
  const selected: Phase[] = PHASES.filter((p) => args.only.length === 0 || args.only.includes(p));
  const results: Results = {
    machine: machine(),
    date: new Date(started).toISOString(),
    mode: args.quick ? 'quick' : 'full',
    durationSeconds: 0,
    inputs: { seed: args.seed, runId, phases: selected, sideBySide: GROUPS.filter((g) => g.length > 1) },
    figures: [],
    failures: [],
  };

  let interrupted = false;
  process.on('SIGINT', () => {
    // The phase process gets the same SIGINT from the terminal and cleans up; stop after it.
    interrupted = true;
  });

  const byPhase = new Map<Phase, PhaseResult>();
  const runOne = async (phase: Phase) => {
    const resources: Resource[] = [];
    const phaseStarted = Date.now();
    process.stderr.write(`== ${phase} (${args.quick ? 'quick' : 'full'}) started\n`);
    try {
      byPhase.set(phase, await runPhase(phase, options, args.phaseTimeoutMs, (r) => resources.push(r)));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      results.failures.push({ phase, error: message });
      process.stderr.write(`!! ${phase} failed: ${message}\n`);
    } finally {
      const problems = await sweep(resources);
      for (const p of problems) process.stderr.write(`!! cleanup after ${phase}: ${p}\n`);
    }
    process.stderr.write(`== ${phase} took ${((Date.now() - phaseStarted) / 1000).toFixed(1)} s\n`);
  };
  for (const group of GROUPS) {
    const phases = group.filter((p) => selected.includes(p));
    if (interrupted) break;
    if (phases.length > 0) await Promise.all(phases.map(runOne));
  }
  // Figures in the order of the phase list, whatever order the phases finished in.
  for (const phase of selected) {
    const result = byPhase.get(phase);
    if (!result) continue;
    results.figures.push(...result.figures);
    Object.assign(results.inputs, result.inputs);
  }

  results.durationSeconds = round((Date.now() - started) / 1000, 1);
  await mkdir(path.dirname(args.out), { recursive: true });
  await writeFile(args.out, JSON.stringify(results, null, 2) + '\n');

  const missed = results.figures.filter((f: Figure) => f.met === false);
  console.log(
    `\nBenchmarks (${results.mode}, seed ${args.seed}) on ${String(results.machine['cores'])} cores, ${String(results.machine['memoryGiB'])} GiB, Node ${process.version}, ${results.date}\n`,
  );
  console.log(renderTable(results.figures));
  console.log(
    `\n${results.figures.length} figures, ${missed.length} missed their target${missed.length ? `: ${missed.map((f) => f.name).join('; ')}` : ''}.`,
  );
  for (const f of results.failures) console.log(`FAILED phase ${f.phase}: ${f.error.split('\n')[0]}`);
  console.log(`Took ${results.durationSeconds} s. Written to ${path.relative(process.cwd(), args.out)} (notes per figure are there).`);
  return results.failures.length > 0 || interrupted ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
