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
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import type { LlmProvider } from '../../src/llm/provider.ts';
import { silentLogger } from '../../src/logger.ts';
import { openHarness } from '../agent.ts';
import { countSqlStatements, describeCpu, startCpuMeter, type CpuReport } from '../cpu.ts';
import { describeCorpus, generateCorpus, type GeneratedMail } from '../generate-mail.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, megabytes, NO_TARGET, percentile, round, type Figure, type PhaseResult } from '../report.ts';
import { RssSampler, settle } from '../rss.ts';
import { realisticTurnModel, withLatency } from '../scripted-model.ts';

const MODEL_LATENCY_MS = 1000;
const HEADLINE_CONCURRENCY = 16;
const TARGET_RATIO = 0.95;
const POLL_MS = 10;

interface Plan {
  concurrency: number;
  turns: number;
}

/**
 * Concurrency 1 runs two turns more than it measures: the first is a warm-up, and the last only
 * marks where the one before it ended (see `perTurn`).
 */
function plans(quick: boolean): Plan[] {
  return quick
    ? [
        { concurrency: 1, turns: 22 },
        { concurrency: 4, turns: 16 },
        { concurrency: 16, turns: 48 },
      ]
    : [
        { concurrency: 1, turns: 52 },
        { concurrency: 4, turns: 48 },
        { concurrency: 16, turns: 160 },
      ];
}

/** One turn as the worker ran it, seen from the benchmark. */
interface TurnMark {
  /** `performance.now()` when the worker's processor asked the runtime for the turn's dependencies. */
  startedAt: number;
  /** SQL statements this process had sent on node-postgres before the turn began. */
  statementsBefore: number;
  /** Time its SQL statements had taken before the turn began (see `countSqlStatements`). */
  queryMsBefore: number;
  /** Time inside `provider.messageTurn`, summed over the turn's calls (a repair is a second call). */
  modelMs: number;
  modelCalls: number;
}

/** The provider, timed: the model call as the agent sees it (HTTP round trip and answer parsing included). */
function timedProvider(provider: LlmProvider, mark: TurnMark): LlmProvider {
  return {
    name: provider.name,
    model: provider.model,
    messageTurn: async (request) => {
      const started = performance.now();
      try {
        return await provider.messageTurn(request);
      } finally {
        mark.modelMs += performance.now() - started;
        mark.modelCalls++;
      }
    },
    threadPromotion: (request) => provider.threadPromotion(request),
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
  /** The SQL of the second turn (the first measured one at concurrency 1), in order. */
  sampleStatements: string[];
  /** Jobs that failed an attempt and ran again (their turn starts are in `marks` twice). */
  retries: Array<{ attempts: number; reason: string }>;
}

/** Pending messages in distinct threads, one turn job each, then the workers start. */
async function turnRun(ctx: PhaseContext, plan: Plan, mail: readonly GeneratedMail[]): Promise<TurnRun> {
  const h = await openHarness(ctx, { WORKER_CONCURRENCY: String(plan.concurrency) }, { workers: false });
  h.llm.setFallback(withLatency(realisticTurnModel(), MODEL_LATENCY_MS));
  const { runtime } = h;
  const deps = { sql: runtime.database.sql, mailbox: runtime.mailbox, settings: runtime.ingest, logger: silentLogger };
  const threads = new Set<string>();
  for (const m of mail) {
    const source = { kind: 'imap' as const, folder: 'INBOX', uid: m.index + 1 };
    const r = await ingestRawMessage(deps, m.raw, source, { receivedAt: m.date, now: new Date(m.date.getTime() + 60_000) });
    if (r.threadId && r.replyNeeded) threads.add(r.threadId);
  }
  for (const threadId of threads) await runtime.queues().enqueueTurn(threadId);
  const n = threads.size;

  // The worker asks the runtime for the turn's dependencies once per job, just before the turn.
  const statements = countSqlStatements();
  const marks: TurnMark[] = [];
  const sampleStatements: string[] = [];
  let untap: (() => void) | null = null;
  const turnDeps = runtime.turnDeps;
  runtime.turnDeps = () => {
    const real = turnDeps();
    const mark: TurnMark = {
      startedAt: performance.now(),
      statementsBefore: statements.read(),
      queryMsBefore: statements.busyMs(),
      modelMs: 0,
      modelCalls: 0,
    };
    marks.push(mark);
    untap?.();
    untap = marks.length === 2 ? statements.tap((text) => sampleStatements.push(text)) : null;
    return { ...real, provider: timedProvider(real.provider, mark) };
  };

  // Progress is read from Redis (BullMQ's counts), so the benchmark sends no SQL of its own meanwhile.
  const queue = runtime.queues().turns;
  const statementsAtStart = statements.read();
  const queryMsAtStart = statements.busyMs();
  const cpu = startCpuMeter();
  const startCalled = performance.now();
  await h.startWorkers();
  const deadline = Date.now() + 600_000;
  for (;;) {
    const counts = await queue.getJobCounts('completed', 'failed');
    if ((counts['failed'] ?? 0) > 0) throw new Error(`concurrency ${plan.concurrency}: ${counts['failed']} turn job(s) failed`);
    if ((counts['completed'] ?? 0) >= n) break;
    if (Date.now() > deadline) throw new Error(`turns at concurrency ${plan.concurrency} did not finish in 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const ended = performance.now();
  const cpuReport = cpu.stop();
  const statementsTotal = statements.read() - statementsAtStart;
  const queryMsTotal = statements.busyMs() - queryMsAtStart;
  (untap as (() => void) | null)?.();
  runtime.turnDeps = turnDeps;
  // A job that failed an attempt and was retried: BullMQ keeps each failed attempt's stack trace.
  const retries = (await queue.getJobs(['completed'], 0, -1))
    .filter((job) => (job.stacktrace?.length ?? 0) > 0 || Boolean(job.failedReason))
    .map((job) => ({ attempts: job.attemptsMade, reason: (job.failedReason ?? '').slice(0, 300) }));
  // At concurrency 1 a retried job would blur the per-turn attribution: fail loudly instead.
  if (plan.concurrency === 1 && (retries.length > 0 || marks.length !== n)) {
    throw new Error(`concurrency 1: ${marks.length} turn starts for ${n} jobs; retried: ${JSON.stringify(retries)}`);
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
    statementsBeforeFirstTurn: first.statementsBefore - statementsAtStart,
    marks,
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
}

/**
 * At concurrency 1 a turn runs from its processor's start to the next turn's, so its window holds
 * everything the worker did for it: the turn, what follows it (BullMQ bookkeeping, the check for
 * more mail) and the fetch of the next job. The first turn (warm-up) and the last (no next start
 * to close its window) are left out.
 */
function perTurn(marks: readonly TurnMark[]): PerTurn {
  const out: PerTurn = { turnMs: [], modelMs: [], agentMs: [], statements: [], queryMs: [] };
  for (let i = 1; i + 1 < marks.length; i++) {
    const mark = marks[i]!;
    const next = marks[i + 1]!;
    const turnMs = next.startedAt - mark.startedAt;
    out.turnMs.push(turnMs);
    out.modelMs.push(mark.modelMs);
    out.agentMs.push(turnMs - mark.modelMs);
    out.statements.push(next.statementsBefore - mark.statementsBefore);
    out.queryMs.push(next.queryMsBefore - mark.queryMsBefore);
  }
  return out;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
/** Mean model time per turn, over the turn starts that reached the model (a failed attempt may not have). */
const meanModelMs = (marks: readonly TurnMark[]) => mean(marks.filter((m) => m.modelCalls > 0).map((m) => m.modelMs));

function describeRun(run: TurnRun): string {
  const { concurrency } = run.plan;
  const slotMs = (concurrency * run.seconds * 1000) / run.turns;
  const modelMs = meanModelMs(run.marks);
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
    ctx.log(`concurrency ${plan.concurrency}: ${run.rate.toFixed(2)} turns/s (${run.turns} in ${run.seconds.toFixed(1)} s), ceiling ${ceiling}/s`);
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
        notes: `baseline: the ceiling, concurrency / model latency = ${concurrency} / ${MODEL_LATENCY_MS / 1000} s (not measured); ` + describeRun(run),
      }),
    );
  }

  const serial = runs.find((r) => r.plan.concurrency === 1);
  const serialInputs: Record<string, unknown> = {};
  if (serial) {
    const t = perTurn(serial.marks);
    const measured = t.agentMs.length;
    const spread = (xs: number[]) =>
      `min ${Math.min(...xs).toFixed(1)}, p50 ${percentile(xs, 50).toFixed(1)}, p95 ${percentile(xs, 95).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}`;
    const agentNotes =
      `concurrency 1, ${measured} turns (the first of ${serial.turns} is a warm-up, the last only closes the window of the one before); ` +
      `a turn's time runs from its processor's start to the next turn's (so BullMQ's completion and next fetch are in it); ` +
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
      `adapter-pg and the plain-SQL path both use; BEGIN and COMMIT count) between a turn's start and the next one's; ` +
      `nothing else in the process talks to PostgreSQL meanwhile (progress is read from Redis; ` +
      `${serial.statementsBeforeFirstTurn} statements between startWorkers() and the first turn); ` +
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
          'the clock runs from the first turn start to the last completion (read from BullMQ counts in Redis every 10 ms)',
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
              modelCallMsMean: round(meanModelMs(run.marks), 1),
              modelCalls: run.marks.reduce((sum, m) => sum + m.modelCalls, 0),
              turnStarts: run.marks.length,
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
