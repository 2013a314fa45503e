/**
 * Figure 3, what the agent adds to a model call. Reply turns run through the real workers
 * (`startWorkers`: BullMQ on real Redis, PostgreSQL, the real openai client) against the scripted
 * LLM server answering every message_turn after a fixed second (its own timer, so the wait costs
 * no CPU). REPLY_MODE=draft without IMAP, so no outbox job follows a turn.
 *
 * - Turns per second at WORKER_CONCURRENCY 16 against the ceiling 16 / 1 s (also 1 and 4).
 * - At concurrency 1, where one turn runs at a time so every statement and millisecond belongs to
 *   exactly one turn: the agent's own time per turn (the turn's time less its model call, timed
 *   around `provider.messageTurn`) and its PostgreSQL round trips (statements sent on node-postgres).
 *
 * Also the peak RSS of the phase (figure 5).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Worker, type Job } from 'bullmq';
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import type { LlmProvider } from '../../src/llm/provider.ts';
import { silentLogger } from '../../src/logger.ts';
import { QUEUES } from '../../src/queue/jobs.ts';
import { openHarness } from '../agent.ts';
import { countSqlStatements, describeCpu, startCpuMeter, type CpuReport } from '../cpu.ts';
import { describeCorpus, generateCorpus, type GeneratedMail } from '../generate-mail.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, megabytes, NO_TARGET, percentile, round, type Figure, type PhaseResult } from '../report.ts';
import { RssSampler, settle } from '../rss.ts';

const MODEL_LATENCY_MS = 1000;
const HEADLINE_CONCURRENCY = 16;
const TARGET_RATIO = 0.95;

interface Plan {
  concurrency: number;
  turns: number;
}

/** Concurrency 1 runs one turn more than it measures: the first is a warm-up (see `perTurn`). */
function plans(quick: boolean): Plan[] {
  return quick
    ? [
        { concurrency: 1, turns: 21 },
        { concurrency: 4, turns: 16 },
        { concurrency: 16, turns: 48 },
      ]
    : [
        { concurrency: 1, turns: 51 },
        { concurrency: 4, turns: 48 },
        { concurrency: 16, turns: 160 },
      ];
}

/** One turn job as the worker ran it, seen from the benchmark. */
interface TurnMark {
  jobId: string;
  /** `performance.now()` when BullMQ's worker took the job ('active', right before the processor runs). */
  startedAt: number;
  /** When the worker had recorded it completed ('completed', after `moveToCompleted`, which also fetches the next job). */
  endedAt: number | null;
  /** SQL statements this process had sent on node-postgres at the start and at the end. */
  statementsAtStart: number;
  statementsAtEnd: number;
  /** Time its SQL statements had taken, at the start and at the end (see `countSqlStatements`). */
  queryMsAtStart: number;
  queryMsAtEnd: number;
}

/** One call of `provider.messageTurn`: the model call as the agent sees it (HTTP round trip and answer parsing included). */
interface ModelCall {
  startedAt: number;
  ms: number;
}

type JobEvent = 'active' | 'completed' | 'failed';

/**
 * Hands the benchmark BullMQ's own job events of one queue ('active', 'completed', 'failed'),
 * however the product wires its workers: it wraps `Worker.prototype.emit` until the returned
 * function is called. The listener runs inside BullMQ, so it only records.
 */
function tapWorkerEvents(
  queue: string,
  prefix: string,
  listener: (event: JobEvent, job: Job | undefined, error: unknown) => void,
): () => void {
  const proto = Worker.prototype as unknown as { emit: (this: Worker, event: string, ...args: unknown[]) => boolean };
  const original = proto.emit;
  proto.emit = function (event, ...args) {
    if ((event === 'active' || event === 'completed' || event === 'failed') && this.name === queue && this.opts.prefix === prefix) {
      listener(event, args[0] as Job | undefined, event === 'failed' ? args[1] : undefined);
    }
    return original.call(this, event, ...args);
  };
  return () => {
    proto.emit = original;
  };
}

/** Times every `messageTurn` of this provider object, which the runtime hands every turn; returns the undo. */
function timeModelCalls(provider: LlmProvider, calls: ModelCall[]): () => void {
  const messageTurn = provider.messageTurn;
  provider.messageTurn = async (request) => {
    const startedAt = performance.now();
    try {
      return await messageTurn.call(provider, request);
    } finally {
      calls.push({ startedAt, ms: performance.now() - startedAt });
    }
  };
  return () => {
    provider.messageTurn = messageTurn;
  };
}

interface TurnRun {
  plan: Plan;
  turns: number;
  rate: number;
  seconds: number;
  startupMs: number;
  drafted: number;
  needsHuman: number;
  cpu: CpuReport;
  statementsPerTurn: number;
  /** Time in SQL statements per turn, summed over the turn's statements. */
  queryMsPerTurn: number;
  /** Statements sent between `startWorkers()` and the first turn: 0 unless something else talks to PostgreSQL. */
  statementsBeforeFirstTurn: number;
  marks: TurnMark[];
  modelCalls: ModelCall[];
  /** The SQL of the second turn (the first measured one at concurrency 1), in order. */
  sampleStatements: string[];
  /** Attempts that failed and ran again (their jobs are in `marks` once per attempt). */
  retries: Array<{ jobId: string; attempt: number; reason: string }>;
}

/** Pending messages in distinct threads, one turn job each, then the workers start. */
async function turnRun(ctx: PhaseContext, plan: Plan, mail: readonly GeneratedMail[]): Promise<TurnRun> {
  const model = await startModelProcess(ctx, MODEL_LATENCY_MS);
  const h = await openHarness(ctx, { WORKER_CONCURRENCY: String(plan.concurrency), OPENAI_BASE_URL: model }, { workers: false });
  const { runtime } = h;
  const deps = runtime.ingestDeps({ logger: silentLogger, pipeline: null });
  const threads = new Set<string>();
  for (const m of mail) {
    const source = { kind: 'imap' as const, folder: 'INBOX', uid: m.index + 1 };
    const r = await ingestRawMessage(deps, m.raw, source, { receivedAt: m.date, now: new Date(m.date.getTime() + 60_000) });
    if (r.threadId && r.replyNeeded) threads.add(r.threadId);
  }
  for (const threadId of threads) await runtime.queues().enqueueTurn(threadId);
  const n = threads.size;

  const statements = countSqlStatements();
  const marks: TurnMark[] = [];
  const open = new Map<string, TurnMark>();
  const modelCalls: ModelCall[] = [];
  const sampleStatements: string[] = [];
  const retries: TurnRun['retries'] = [];
  let untapSql: (() => void) | null = null;
  let completed = 0;
  let done: { resolve: () => void; reject: (error: Error) => void } | null = null;
  const finished = new Promise<void>((resolve, reject) => (done = { resolve, reject }));
  // Awaited below; a failure reported before that must not count as unhandled meanwhile.
  finished.catch(() => undefined);
  const close = (mark: TurnMark) => {
    mark.endedAt = performance.now();
    mark.statementsAtEnd = statements.read();
    mark.queryMsAtEnd = statements.busyMs();
    open.delete(mark.jobId);
    if (marks.indexOf(mark) === 1) untapSql?.();
  };
  const untimeModel = timeModelCalls(runtime.provider, modelCalls);
  ctx.defer('stop timing model calls', async () => untimeModel());
  const untapJobs = tapWorkerEvents(QUEUES.turns, h.prefix, (event, job, error) => {
    const jobId = String(job?.id ?? '?');
    if (event === 'active') {
      const mark: TurnMark = {
        jobId,
        startedAt: performance.now(),
        endedAt: null,
        statementsAtStart: statements.read(),
        statementsAtEnd: 0,
        queryMsAtStart: statements.busyMs(),
        queryMsAtEnd: 0,
      };
      marks.push(mark);
      open.set(jobId, mark);
      if (marks.length === 2) untapSql = statements.tap((text) => sampleStatements.push(text));
      return;
    }
    const mark = open.get(jobId);
    if (mark) close(mark);
    if (event === 'completed') {
      if (++completed === n) done?.resolve();
      return;
    }
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, 300);
    retries.push({ jobId, attempt: job?.attemptsMade ?? 0, reason });
    if (!job || job.attemptsMade >= (job.opts.attempts ?? 1))
      done?.reject(new Error(`concurrency ${plan.concurrency}: a turn job failed for good: ${reason}`));
  });
  ctx.defer('stop tapping BullMQ events', async () => untapJobs());
  ctx.defer('stop listing SQL', async () => (untapSql as (() => void) | null)?.());

  const statementsAtStart = statements.read();
  const queryMsAtStart = statements.busyMs();
  const cpu = startCpuMeter();
  const startCalled = performance.now();
  await h.startWorkers();
  const deadline = setTimeout(
    () => done?.reject(new Error(`turns at concurrency ${plan.concurrency} did not finish in 10 minutes`)),
    600_000,
  );
  try {
    await finished;
  } finally {
    clearTimeout(deadline);
  }
  const ended = performance.now();
  const cpuReport = cpu.stop();
  const statementsTotal = statements.read() - statementsAtStart;
  const queryMsTotal = statements.busyMs() - queryMsAtStart;
  untapJobs();
  untimeModel();
  // At concurrency 1 a retried attempt would blur the per-turn attribution: fail loudly instead.
  if (plan.concurrency === 1 && (retries.length > 0 || marks.length !== n)) {
    throw new Error(`concurrency 1: ${marks.length} job starts for ${n} jobs; failed attempts: ${JSON.stringify(retries)}`);
  }

  const first = marks[0]!;
  // The clock starts with the first turn: how long the workers take to connect is not a turn's cost.
  const seconds = (ended - first.startedAt) / 1000;
  const drafted = await runtime.db.draft.count();
  const needsHuman = await runtime.db.draft.count({ where: { needsHuman: true } });
  await h.workers?.close();
  return {
    plan,
    turns: n,
    rate: n / seconds,
    seconds,
    startupMs: first.startedAt - startCalled,
    drafted,
    needsHuman,
    cpu: cpuReport,
    statementsPerTurn: statementsTotal / n,
    queryMsPerTurn: queryMsTotal / n,
    statementsBeforeFirstTurn: first.statementsAtStart - statementsAtStart,
    marks,
    modelCalls,
    sampleStatements,
    retries,
  };
}

interface PerTurn {
  turnMs: number[];
  modelMs: number[];
  agentMs: number[];
  statements: number[];
  queryMs: number[];
  /** Statements sent while no turn job was active (between one's completion and the next one's start): should be 0. */
  statementsBetween: number;
}

/**
 * At concurrency 1 one job runs at a time, so everything between its 'active' and its
 * 'completed' event is that turn's: the turn itself, what follows it in the job (scheduling the
 * promotion, the check for more mail) and BullMQ's completion, which also fetches the next job.
 * Its model time is the model calls that started inside that window. The first turn is a warm-up.
 */
function perTurn(marks: readonly TurnMark[], calls: readonly ModelCall[]): PerTurn {
  const out: PerTurn = { turnMs: [], modelMs: [], agentMs: [], statements: [], queryMs: [], statementsBetween: 0 };
  for (const [i, mark] of marks.entries()) {
    const next = marks[i + 1];
    if (next) out.statementsBetween += next.statementsAtStart - mark.statementsAtEnd;
    if (i === 0 || mark.endedAt === null) continue;
    const endedAt = mark.endedAt;
    const turnMs = endedAt - mark.startedAt;
    const modelMs = calls.filter((c) => c.startedAt >= mark.startedAt && c.startedAt <= endedAt).reduce((sum, c) => sum + c.ms, 0);
    out.turnMs.push(turnMs);
    out.modelMs.push(modelMs);
    out.agentMs.push(turnMs - modelMs);
    out.statements.push(mark.statementsAtEnd - mark.statementsAtStart);
    out.queryMs.push(mark.queryMsAtEnd - mark.queryMsAtStart);
  }
  return out;
}

/** Mean model time per turn (a repair is a second call of the same turn). */
const meanModelMs = (run: TurnRun) => run.modelCalls.reduce((sum, c) => sum + c.ms, 0) / Math.max(1, run.turns);

function describeRun(run: TurnRun): string {
  const { concurrency } = run.plan;
  const slotMs = (concurrency * run.seconds * 1000) / run.turns;
  const modelMs = meanModelMs(run);
  return (
    `${run.turns} turns in distinct threads in ${run.seconds.toFixed(2)} s from the first turn's start to the last one's completion ` +
    `(the workers took ${run.startupMs.toFixed(0)} ms to start, not counted), ` +
    `${run.drafted} drafts (${run.needsHuman} flagged for a person); ` +
    `each of the ${concurrency} slots spent ${slotMs.toFixed(0)} ms per turn, ` +
    `of which the model call ${modelMs.toFixed(0)} ms (mean) and ` +
    `${(slotMs - modelMs).toFixed(0)} ms everything else (the agent's work, waiting for PostgreSQL, Redis and the CPU); ` +
    `${run.statementsPerTurn.toFixed(1)} SQL statements per turn taking ${run.queryMsPerTurn.toFixed(0)} ms together ` +
    `(mean, once connected); during the turns ${describeCpu(run.cpu)}` +
    (run.retries.length > 0
      ? `; ${run.retries.length} turn job(s) failed an attempt and ran again (in the time): ${run.retries.map((r) => r.reason).join(' | ')}`
      : '')
  );
}

export async function runWorkerThroughput(ctx: PhaseContext): Promise<PhaseResult> {
  const runPlans = plans(ctx.quick);
  const total = runPlans.reduce((sum, p) => sum + p.turns, 0);
  const corpus = await generateCorpus({ seed: ctx.seed + 202, count: total, startersOnly: true });

  await settle();
  const sampler = new RssSampler();
  sampler.start();
  const rssBefore = sampler.sample();
  const runs: TurnRun[] = [];
  let offset = 0;
  for (const plan of runPlans) {
    const slice = corpus.slice(offset, offset + plan.turns);
    offset += plan.turns;
    const run = await ctx.scope(() => turnRun(ctx, plan, slice));
    const ceiling = plan.concurrency / (MODEL_LATENCY_MS / 1000);
    ctx.log(
      `concurrency ${plan.concurrency}: ${run.rate.toFixed(2)} turns/s (${run.turns} in ${run.seconds.toFixed(1)} s), ceiling ${ceiling}/s`,
    );
    runs.push(run);
  }
  const peak = sampler.stop().peakBytes;

  const figures: Figure[] = [];
  for (const run of runs) {
    const { concurrency } = run.plan;
    const ceiling = concurrency / (MODEL_LATENCY_MS / 1000);
    const headline = concurrency === HEADLINE_CONCURRENCY;
    figures.push(
      figure({
        name: `3. worker throughput, concurrency ${concurrency}`,
        value: run.rate,
        unit: 'turns/s',
        baseline: ceiling,
        target: headline ? `>= ${TARGET_RATIO * 100}% of the ceiling` : NO_TARGET,
        met: headline ? run.rate / ceiling >= TARGET_RATIO : null,
        notes:
          `baseline: the ceiling, concurrency / model latency = ${concurrency} / ${MODEL_LATENCY_MS / 1000} s (not measured); ` +
          describeRun(run),
      }),
    );
  }

  const serial = runs.find((r) => r.plan.concurrency === 1);
  const serialInputs: Record<string, unknown> = {};
  if (serial) {
    const t = perTurn(serial.marks, serial.modelCalls);
    const measured = t.agentMs.length;
    const spread = (xs: number[]) =>
      `min ${Math.min(...xs).toFixed(1)}, p50 ${percentile(xs, 50).toFixed(1)}, p95 ${percentile(xs, 95).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}`;
    const agentNotes =
      `concurrency 1, ${measured} turns (the first of ${serial.turns} is a warm-up); a turn's time runs from BullMQ's 'active' ` +
      `to its 'completed' event (so BullMQ's completion, which also fetches the next job, is in it); ` +
      `the model call is timed around provider.messageTurn, so the openai client's HTTP round trip on loopback ` +
      `and the answer's parsing count as the model; ` +
      `baseline: the model call itself at the same percentile (the scripted server holds every answer ${MODEL_LATENCY_MS} ms); ` +
      `agent ms ${spread(t.agentMs)}; of that, in SQL statements (from sending to the answer, summed): ms ${spread(t.queryMs)}; ` +
      `whole turn ms ${spread(t.turnMs)}; model ms ${spread(t.modelMs)}`;
    for (const p of [50, 95]) {
      figures.push(
        figure({
          name: `3. agent time per turn beyond the model, p${p}`,
          value: percentile(t.agentMs, p),
          unit: 'ms',
          baseline: percentile(t.modelMs, p),
          target: NO_TARGET,
          met: null,
          notes: agentNotes,
        }),
      );
    }
    const roundTripNotes =
      `concurrency 1, the same ${measured} turns: SQL statements sent on node-postgres (Client.prototype.query, which Prisma's ` +
      `adapter-pg and the plain-SQL path both use; BEGIN and COMMIT count) between a turn job's 'active' and 'completed' events; ` +
      `nothing else in the process talks to PostgreSQL meanwhile (${serial.statementsBeforeFirstTurn} statements between ` +
      `startWorkers() and the first turn, ${t.statementsBetween} between turns); ` +
      `min ${Math.min(...t.statements)}, max ${Math.max(...t.statements)}; ` +
      `no baseline: there is no turn without the database to compare with; the statements of one turn are in inputs`;
    for (const p of [50, 95]) {
      figures.push(
        figure({
          name: `3. database round trips per turn, p${p}`,
          value: percentile(t.statements, p),
          unit: 'queries',
          baseline: null,
          target: NO_TARGET,
          met: null,
          notes: roundTripNotes,
        }),
      );
    }
    serialInputs['concurrency1PerTurn'] = {
      measuredTurns: measured,
      agentMs: t.agentMs.map((x) => round(x, 2)),
      modelMs: t.modelMs.map((x) => round(x, 2)),
      statements: t.statements,
      statementsBetweenTurns: t.statementsBetween,
      queryMs: t.queryMs.map((x) => round(x, 2)),
      statementsOfOneTurn: serial.sampleStatements,
    };
  }

  figures.push(
    figure({
      name: '5. peak RSS during worker throughput',
      value: megabytes(peak),
      unit: 'MB',
      baseline: megabytes(rssBefore),
      target: NO_TARGET,
      met: null,
      notes:
        'over the whole phase: ingestion of the pending mail and the turn runs at all three concurrencies (one agent open at a time); ' +
        'baseline: RSS of the same process before the first agent opened, with the corpus in memory',
    }),
  );
  return {
    figures,
    inputs: {
      'worker-throughput': {
        method:
          'per concurrency: a fresh agent (PostgreSQL database, Redis prefix, the scripted LLM server on loopback in this process, ' +
          'as in the tests), REPLY_MODE=draft and no IMAP (no outbox jobs); messages ingested first, one turn job per thread enqueued, ' +
          `then startWorkers(); every message_turn answered after ${MODEL_LATENCY_MS} ms by the server's timer; ` +
          "the clock runs from the first turn job's 'active' event to the last one's 'completed' (BullMQ's worker events)",
        modelLatencyMs: MODEL_LATENCY_MS,
        corpus: { seed: ctx.seed + 202, ...describeCorpus(corpus) },
        runs: Object.fromEntries(
          runs.map((run) => [
            `concurrency${run.plan.concurrency}`,
            {
              turns: run.turns,
              seconds: round(run.seconds, 3),
              startupMs: round(run.startupMs, 1),
              drafted: run.drafted,
              needsHuman: run.needsHuman,
              statementsPerTurn: round(run.statementsPerTurn, 2),
              queryMsPerTurn: round(run.queryMsPerTurn, 1),
              modelMsPerTurn: round(meanModelMs(run), 1),
              modelCalls: run.modelCalls.length,
              jobStarts: run.marks.length,
              retries: run.retries,
              processCores: round(run.cpu.processCores),
              machineBusy: run.cpu.machineBusy === null ? null : round(run.cpu.machineBusy),
            },
          ]),
        ),
        ...serialInputs,
      },
    },
  };
}

/**
 * The scripted model (answering after `latencyMs`) in a child process, so its work does not share
 * the measured process; its URL. Stopped when the phase's scope ends.
 */
export async function startModelProcess(ctx: PhaseContext, latencyMs: number): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '..', 'model-server.ts'), String(latencyMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  ctx.defer('stop the model process', async () => {
    child.stdin.end();
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  });
  const line = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end >= 0) resolve(buffered.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`the model process exited (${code}) before it served`)));
  });
  return (JSON.parse(line) as { url: string }).url;
}
