/**
 * Figure 3, worker throughput: reply turns per second through the real workers (`startWorkers`:
 * BullMQ on real Redis, PostgreSQL, the zero-latency scripted LLM server on loopback) at
 * WORKER_CONCURRENCY 1, 4 and 16, against BullMQ no-op jobs (a Worker whose processor returns at
 * once) with the same job options, the same Redis and the same concurrency, measured alongside.
 * REPLY_MODE=draft without IMAP, so no outbox job follows a turn. Also the peak RSS (figure 5).
 */
import { Worker } from 'bullmq';
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import { silentLogger } from '../../src/logger.ts';
import { JobQueues, QUEUES } from '../../src/queue/jobs.ts';
import { createRedis } from '../../src/queue/redis.ts';
import { deleteRedisPrefix, REDIS_URL } from '../../test/support/agent-harness.ts';
import { openHarness } from '../agent.ts';
import { countSqlStatements, describeCpu, startCpuMeter, type CpuReport } from '../cpu.ts';
import { describeCorpus, generateCorpus, type GeneratedMail } from '../generate-mail.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, megabytes, NO_TARGET, round, type Figure, type PhaseResult } from '../report.ts';
import { RssSampler, settle } from '../rss.ts';
import { realisticTurnModel } from '../scripted-model.ts';

const CONCURRENCIES = [1, 4, 16] as const;
const TARGET_RATIO = 0.15;

/** BullMQ alone: jobs added exactly as `enqueueTurn` adds them, a processor that does nothing. */
async function noopRate(ctx: PhaseContext, concurrency: number, jobs: number, attempt: number): Promise<number> {
  const prefix = `sa-bench-${ctx.runId}-noop-c${concurrency}-${attempt}`;
  ctx.track({ kind: 'redis-prefix', prefix });
  ctx.defer('delete the no-op queue', async () => {
    await deleteRedisPrefix(prefix);
  });
  const connection = createRedis(REDIS_URL, { forWorker: true });
  ctx.defer('close the no-op Redis connection', async () => {
    await connection.quit().catch(() => connection.disconnect());
  });
  const queues = new JobQueues(connection, prefix);
  ctx.defer('close the no-op queues', () => queues.close());
  for (let i = 0; i < jobs; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, jobs - i) }, (_, j) => queues.enqueueTurn(`t_noop_${i + j}`)));
  }
  let done = 0;
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const started = performance.now();
  const worker = new Worker(QUEUES.turns, async () => 'noop', { connection, prefix, concurrency });
  ctx.defer('close the no-op worker', () => worker.close());
  worker.on('completed', () => {
    if (++done === jobs) finish();
  });
  worker.on('failed', () => {
    if (++done === jobs) finish();
  });
  await finished;
  return jobs / ((performance.now() - started) / 1000);
}

interface TurnRun {
  rate: number;
  seconds: number;
  drafted: number;
  needsHuman: number;
  cpu: CpuReport;
  statementsPerTurn: number;
}

/** The real thing: pending messages in distinct threads, their turn jobs queued, then the workers start. */
async function turnRate(ctx: PhaseContext, concurrency: number, mail: readonly GeneratedMail[]): Promise<TurnRun> {
  const h = await openHarness(ctx, { WORKER_CONCURRENCY: String(concurrency) }, { workers: false });
  h.llm.setFallback(realisticTurnModel());
  const { runtime } = h;
  const deps = { sql: runtime.database.sql, mailbox: runtime.mailbox, settings: runtime.ingest, logger: silentLogger };
  const threads = new Set<string>();
  for (const m of mail) {
    const r = await ingestRawMessage(deps, m.raw, { kind: 'imap', folder: 'INBOX', uid: m.index + 1 }, { receivedAt: m.date, now: new Date(m.date.getTime() + 60_000) });
    if (r.threadId && r.replyNeeded) threads.add(r.threadId);
  }
  for (const threadId of threads) await runtime.queues().enqueueTurn(threadId);
  const n = threads.size;

  const finishedTurns = () => runtime.db.turn.count({ where: { finishedAt: { not: null } } });
  const statements = countSqlStatements();
  const statementsBefore = statements.read();
  let polls = 0;
  const cpu = startCpuMeter();
  const started = performance.now();
  await h.startWorkers();
  const deadline = Date.now() + 600_000;
  while ((polls++, await finishedTurns()) < n) {
    if (Date.now() > deadline) throw new Error(`turns at concurrency ${concurrency} did not finish in 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const seconds = (performance.now() - started) / 1000;
  const cpuReport = cpu.stop();
  // Less the benchmark's own progress polls (one COUNT each).
  const statementsPerTurn = (statements.read() - statementsBefore - polls) / n;
  const drafted = await runtime.db.draft.count();
  const needsHuman = await runtime.db.draft.count({ where: { needsHuman: true } });
  await h.workers?.close();
  return { rate: n / seconds, seconds, drafted, needsHuman, cpu: cpuReport, statementsPerTurn };
}

export async function runWorkerThroughput(ctx: PhaseContext): Promise<PhaseResult> {
  const turnsPerRun = ctx.quick ? 40 : 400;
  const noopJobs = ctx.quick ? 500 : 4000;
  const corpus = await generateCorpus({ seed: ctx.seed + 202, count: turnsPerRun * CONCURRENCIES.length, startersOnly: true });

  await settle();
  const sampler = new RssSampler();
  sampler.start();
  const rssBefore = sampler.sample();
  const figures: Figure[] = [];
  const runs: Record<string, unknown> = {};
  for (const [i, concurrency] of CONCURRENCIES.entries()) {
    const slice = corpus.slice(i * turnsPerRun, (i + 1) * turnsPerRun);
    const before = await ctx.scope(() => noopRate(ctx, concurrency, noopJobs, 1));
    const run = await ctx.scope(() => turnRate(ctx, concurrency, slice));
    const after = await ctx.scope(() => noopRate(ctx, concurrency, noopJobs, 2));
    // The faster no-op run is the baseline: noise can only make the ratio look worse.
    const noop = Math.max(before, after);
    ctx.log(`concurrency ${concurrency}: ${run.rate.toFixed(1)} turns/s (${turnsPerRun} in ${run.seconds.toFixed(1)} s), no-op ${before.toFixed(0)} / ${after.toFixed(0)} jobs/s`);
    runs[`concurrency${concurrency}`] = {
      turns: turnsPerRun,
      seconds: round(run.seconds, 2),
      drafted: run.drafted,
      needsHuman: run.needsHuman,
      noopJobsPerSecond: [round(before), round(after)],
      statementsPerTurn: round(run.statementsPerTurn, 1),
      processCores: round(run.cpu.processCores),
      machineBusy: run.cpu.machineBusy === null ? null : round(run.cpu.machineBusy),
    };
    figures.push(
      figure({
        name: `3. worker throughput, concurrency ${concurrency}`,
        value: run.rate,
        unit: 'jobs/s',
        baseline: noop,
        target: concurrency === 16 ? `>= ${TARGET_RATIO * 100}% of BullMQ no-op` : NO_TARGET,
        met: concurrency === 16 ? run.rate / noop >= TARGET_RATIO : null,
        notes: `${turnsPerRun} turns in distinct threads, ${run.drafted} drafts (${run.needsHuman} flagged for a person); no-op runs before and after: ${before.toFixed(0)} and ${after.toFixed(0)} jobs/s (the faster is the baseline); ${run.statementsPerTurn.toFixed(1)} SQL statements per turn; during the turns ${describeCpu(run.cpu)}`,
      }),
    );
  }
  const peak = sampler.stop().peakBytes;
  figures.push(
    figure({
      name: '5. peak RSS during worker throughput',
      value: megabytes(peak),
      unit: 'MB',
      baseline: megabytes(rssBefore),
      target: NO_TARGET,
      met: null,
      notes: 'over the whole phase: no-op runs, ingestion of the pending mail and the turn runs at all three concurrencies (one agent open at a time); baseline: RSS of the same process before the first agent opened, with the corpus in memory',
    }),
  );
  return {
    figures,
    inputs: {
      'worker-throughput': {
        method: 'per concurrency: a fresh agent (PostgreSQL database, Redis prefix, scripted LLM server with zero added latency, in this process as in the tests), REPLY_MODE=draft and no IMAP (no outbox jobs); messages ingested first, one turn job per thread enqueued, then startWorkers() and the clock runs until every turn has finished',
        noop: `BullMQ Worker on the same Redis, processor returns at once; ${noopJobs} jobs added with enqueueTurn's options, before and after each turn run`,
        corpus: { seed: ctx.seed + 202, ...describeCorpus(corpus) },
        runs,
      },
    },
  };
}
