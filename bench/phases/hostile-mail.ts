/**
 * Figure 6, hostile mail: time and peak RSS of ingesting each hostile mail through the real
 * ingestion path (PostgreSQL, parse workers, as the poller runs it) and through `support-agent
 * replay` (a process of its own: embedded PGlite, reply turns and promotion with the offline
 * provider), each against a plain 10 KB mail in the same run; and the longest the main thread went
 * without running its timers (event-loop delay) while the hostile mail was ingested, which is what
 * the console and the poller's lease renewal wait on.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { generateHostileCorpus, generateOversizedMail, OVERSIZED_BODY_BYTES } from '../../fixtures/emails/hostile/generate.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, ingestRawMessage, type IngestDeps } from '../../src/ingest/ingest-message.ts';
import { openHarness, pollerIngestDeps } from '../agent.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, megabytes, NO_TARGET, round, type Figure, type PhaseResult } from '../report.ts';
import { RssSampler, settle } from '../rss.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HOSTILE = path.join(ROOT, 'fixtures/emails/hostile');
const REPLAY_TIMEOUT_MS = 15 * 60_000;

interface Mail {
  label: string;
  file: string;
  /** Also run through `replay` on its own (the corpus always is). */
  replay: boolean;
}

interface Measured {
  ms: number;
  peakBytes: number;
  beforeBytes: number;
  stallMs: number;
  outcome: string;
}

async function measureIngest(deps: IngestDeps, file: string): Promise<Measured> {
  const raw = await readFile(file);
  await settle();
  const sampler = new RssSampler(10);
  sampler.start();
  const beforeBytes = sampler.sample();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const result = await ingestRawMessage(deps, raw, { kind: 'api' });
  const ms = performance.now() - started;
  delay.disable();
  const { peakBytes } = sampler.stop();
  return {
    ms,
    peakBytes,
    beforeBytes,
    stallMs: delay.max / 1e6,
    outcome: result.skipReason ? `${result.outcome}:${result.skipReason}` : result.outcome,
  };
}

/** Sums the ingestion of every file of a folder (the hostile corpus), one after the other. */
async function measureIngestAll(deps: IngestDeps, files: readonly string[]): Promise<Measured & { count: number }> {
  await settle();
  const sampler = new RssSampler(10);
  sampler.start();
  const beforeBytes = sampler.sample();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const outcomes = new Map<string, number>();
  for (const file of files) {
    const result = await ingestRawMessage(deps, await readFile(file), { kind: 'api' });
    const key = result.skipReason ? `${result.outcome}:${result.skipReason}` : result.outcome;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  const ms = performance.now() - started;
  delay.disable();
  const { peakBytes } = sampler.stop();
  const outcome = [...outcomes].map(([k, n]) => `${n} ${k}`).join(', ');
  return { ms, peakBytes, beforeBytes, stallMs: delay.max / 1e6, outcome, count: files.length };
}

interface ReplayRun {
  ms: number;
  /** Peak RSS of the replay process (VmHWM from /proc, read until it exits); null elsewhere. */
  peakBytes: number | null;
  ok: boolean;
  detail: string;
}

/** `support-agent replay <inputs>` in a process of its own, as a user runs it. */
async function runReplay(ctx: PhaseContext, inputs: readonly string[], reportDir: string): Promise<ReplayRun> {
  const report = path.join(reportDir, `replay-${Date.now()}.json`);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin/support-agent.js'), 'replay', ...inputs, '--report', report, '--address', 'support@acme.example'],
    {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'error', LLM_PROVIDER: 'offline' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2000);
  });
  let peakBytes: number | null = null;
  const readPeak = async () => {
    try {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]);
      if (Number.isFinite(kb)) peakBytes = Math.max(peakBytes ?? 0, kb * 1024);
    } catch {
      // Gone, or not Linux.
    }
  };
  const poll = setInterval(() => void readPeak(), 50);
  const timer = setTimeout(() => child.kill('SIGKILL'), REPLAY_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  clearInterval(poll);
  clearTimeout(timer);
  const ms = performance.now() - started;
  let detail: string;
  if (code === 0) {
    const parsed = JSON.parse(await readFile(report, 'utf8')) as {
      messages: Array<{ outcome: string; skipReason: string | null }>;
      drafts: unknown[];
    };
    const counts = new Map<string, number>();
    for (const m of parsed.messages)
      counts.set(
        m.skipReason ? `skipped:${m.skipReason}` : m.outcome,
        (counts.get(m.skipReason ? `skipped:${m.skipReason}` : m.outcome) ?? 0) + 1,
      );
    detail = `${[...counts].map(([k, n]) => `${n} ${k}`).join(', ')}; ${parsed.drafts.length} drafts`;
  } else {
    detail = code === null ? `killed after ${REPLAY_TIMEOUT_MS / 60_000} min` : `exit ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`;
    ctx.log(`replay of ${inputs.map((i) => path.basename(i)).join(', ')} failed: ${detail}`);
  }
  return { ms, peakBytes, ok: code === 0, detail };
}

export async function runHostileMail(ctx: PhaseContext): Promise<PhaseResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `sa-bench-${ctx.runId}-hostile-`));
  ctx.track({ kind: 'directory', path: dir });
  ctx.defer('remove the generated hostile mail', () => rm(dir, { recursive: true, force: true }));
  await generateHostileCorpus(dir);
  const oversized = await generateOversizedMail(dir, '53-body-50mb.eml', OVERSIZED_BODY_BYTES, 53);
  const largest = await generateOversizedMail(dir, '54-largest-allowed.eml', DEFAULT_MAX_MESSAGE_BYTES - 1024, 54);
  const plainDir = path.join(dir, 'plain');
  const plain = [
    await generateOversizedMail(plainDir, 'plain-1.eml', 10 * 1024, 61),
    await generateOversizedMail(plainDir, 'plain-2.eml', 10 * 1024, 62),
    await generateOversizedMail(plainDir, 'plain-3.eml', 10 * 1024, 63),
  ];
  const warm = await generateOversizedMail(plainDir, 'warm.eml', 10 * 1024, 60);
  const corpusFiles = [
    ...(await readdir(HOSTILE)).filter((f) => f.endsWith('.eml')).map((f) => path.join(HOSTILE, f)),
    ...(await readdir(dir)).filter((f) => f.endsWith('.eml')).map((f) => path.join(dir, f)),
  ].sort();

  const mails: Mail[] = [
    { label: 'HTML nested 300,000 deep (3.3 MB)', file: path.join(dir, '48-html-nested-300000-deep.eml'), replay: true },
    { label: '150,000 combining marks', file: path.join(dir, '49-combining-marks-150000.eml'), replay: true },
    { label: '767 KB one-line ">" quote', file: path.join(dir, '51-quote-767kb-one-line.eml'), replay: true },
    { label: '767 KB HTML blockquote', file: path.join(dir, '52-html-blockquote-767kb.eml'), replay: false },
    { label: '50 MB body (over the cap)', file: oversized, replay: true },
    { label: `largest allowed mail (${round(megabytes(DEFAULT_MAX_MESSAGE_BYTES - 1024), 1)} MB)`, file: largest, replay: true },
  ];

  // 1. The ingestion path on PostgreSQL, one process, parse workers as configured by default.
  const harness = await openHarness(ctx, { REPLY_MAX_AGE: '36500d' }, { workers: false });
  const deps: IngestDeps = { ...pollerIngestDeps(harness.runtime), onReplyNeeded: async () => {} };
  await measureIngest(deps, warm); // starts the parse worker, warms the JIT
  const plainRuns = [];
  for (const file of plain) plainRuns.push(await measureIngest(deps, file));
  const baseline = plainRuns.reduce((best, run) => (run.ms < best.ms ? run : best));
  const plainStall = Math.max(...plainRuns.map((r) => r.stallMs));
  const ingested: Array<{ mail: Mail; run: Measured }> = [];
  for (const mail of mails) {
    const run = await measureIngest(deps, mail.file);
    ctx.log(`ingested ${mail.label}: ${run.ms.toFixed(0)} ms, peak RSS ${megabytes(run.peakBytes).toFixed(0)} MB (${run.outcome})`);
    ingested.push({ mail, run });
  }
  // Quick mode stops here: the corpus and the replays (each a process of its own, on PGlite) take minutes.
  let corpusRun: (Measured & { count: number }) | null = null;
  const replays: Array<{ label: string; run: ReplayRun }> = [];
  let plainReplay: ReplayRun | null = null;
  if (!ctx.quick) {
    // The corpus again, on a fresh database so that nothing is a duplicate of the runs above.
    const corpusHarness = await openHarness(ctx, { REPLY_MAX_AGE: '36500d' }, { workers: false });
    corpusRun = await measureIngestAll({ ...pollerIngestDeps(corpusHarness.runtime), onReplyNeeded: async () => {} }, corpusFiles);
    ctx.log(
      `ingested the hostile corpus (${corpusRun.count} mails): ${corpusRun.ms.toFixed(0)} ms, peak RSS ${megabytes(corpusRun.peakBytes).toFixed(0)} MB`,
    );

    // 2. `support-agent replay`, each in a process of its own.
    const reportDir = path.join(dir, 'reports');
    plainReplay = await runReplay(ctx, [plain[0]!], reportDir);
    for (const mail of mails.filter((m) => m.replay)) {
      const run = await runReplay(ctx, [mail.file], reportDir);
      ctx.log(
        `replayed ${mail.label}: ${(run.ms / 1000).toFixed(1)} s, peak RSS ${run.peakBytes === null ? '?' : megabytes(run.peakBytes).toFixed(0)} MB (${run.detail})`,
      );
      replays.push({ label: mail.label, run });
    }
    const corpusReplay = await runReplay(ctx, corpusFiles, reportDir);
    ctx.log(
      `replayed the hostile corpus: ${(corpusReplay.ms / 1000).toFixed(1)} s, peak RSS ${corpusReplay.peakBytes === null ? '?' : megabytes(corpusReplay.peakBytes).toFixed(0)} MB (${corpusReplay.detail})`,
    );
    replays.push({ label: `hostile corpus (${corpusFiles.length} mails)`, run: corpusReplay });
  }

  const figures: Figure[] = [];
  const rows: Array<{ mail: Pick<Mail, 'label'>; run: Measured }> = [...ingested];
  if (corpusRun) rows.push({ mail: { label: `hostile corpus (${corpusRun.count} mails)` }, run: corpusRun });
  for (const { mail, run } of rows) {
    figures.push(
      figure({
        name: `6. ingestion time, ${mail.label}`,
        value: run.ms,
        unit: 'ms',
        baseline: baseline.ms,
        target: NO_TARGET,
        met: null,
        notes: `ingestRawMessage on PostgreSQL with the default parse worker; outcome ${run.outcome}; baseline: the fastest of three plain 10 KB mails`,
      }),
      figure({
        name: `6. peak RSS over ingestion, ${mail.label}`,
        value: megabytes(run.peakBytes),
        unit: 'MB',
        baseline: megabytes(run.beforeBytes),
        target: NO_TARGET,
        met: null,
        notes: 'the whole process (main thread and parse worker), sampled every 10 ms; baseline: RSS just before this mail, after a GC',
      }),
    );
  }
  const hostileStall = Math.max(...rows.map((r) => r.run.stallMs));
  figures.push(
    figure({
      name: '6. longest main-thread stall while ingesting hostile mail',
      value: hostileStall,
      unit: 'ms',
      baseline: plainStall,
      target: NO_TARGET,
      met: null,
      notes: `maximum event-loop delay (perf_hooks, 10 ms resolution) over every hostile mail (and the corpus in a full run); baseline: the same over the plain mails. Per mail: ${rows.map((r) => `${r.mail.label} ${r.run.stallMs.toFixed(0)} ms`).join('; ')}`,
    }),
  );
  for (const { label, run } of plainReplay ? replays : []) {
    figures.push(
      figure({
        name: `6. replay time, ${label}`,
        value: run.ok ? run.ms / 1000 : Number.NaN,
        unit: 's',
        baseline: plainReplay!.ms / 1000,
        target: NO_TARGET,
        met: null,
        notes: `support-agent replay in its own process (PGlite in memory, offline provider, turns and promotion): ${run.detail}; baseline: the same for one plain 10 KB mail`,
      }),
      figure({
        name: `6. replay peak RSS, ${label}`,
        value: run.peakBytes === null ? Number.NaN : megabytes(run.peakBytes),
        unit: 'MB',
        baseline: megabytesOrNaN(plainReplay?.peakBytes ?? null),
        target: NO_TARGET,
        met: null,
        notes: 'VmHWM of the replay process (/proc, read every 50 ms until it exits); baseline: the same for one plain 10 KB mail',
      }),
    );
  }
  return {
    figures,
    inputs: {
      'hostile-mail': {
        mails: Object.fromEntries(mails.map((m) => [m.label, path.basename(m.file)])),
        corpus: `${corpusFiles.length} files: fixtures/emails/hostile/*.eml and generate.ts's generated files, plus the 50 MB and largest-allowed mails`,
        maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
        ingestion:
          'PostgreSQL 127.0.0.1:5432 (test/support/postgres.ts), ingestRawMessage, default parse settings (1 worker, 30 s, 512 MB)',
        replay: `node bin/support-agent.js replay <file> (killed after ${REPLAY_TIMEOUT_MS / 60_000} min)`,
      },
    },
  };
}

function megabytesOrNaN(bytes: number | null): number {
  return bytes === null ? Number.NaN : megabytes(bytes);
}
