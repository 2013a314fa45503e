/**
 * Scale-out (issue 25): reply turns per second with two worker processes against one
 * PostgreSQL and one Redis, against one worker process on the same work, in the same run. Each
 * process is the product's own worker entry point (`workers/message-worker.ts`, i.e.
 * `support-agent work`) with the agent's environment; the scripted model answers after 1 s in a
 * process of its own, so a process's concurrency bounds its rate and two processes should
 * double it.
 *
 * The work: one stored message in each of N threads, whose turn jobs are enqueued at once when
 * every process's worker is connected (timed: first turn's start to last turn's finish, by the
 * turns' own clocks). Then, untimed, two more messages per thread arrive through the poller's path
 * (which enqueues the thread's turn job), back to back, so the third often lands while the
 * second's turn runs, in either process. Checked from the database afterwards: no turn drafted
 * twice (one draft per turn, every customer message in exactly one turn), and per thread the
 * turns ran one after another and answered the messages in their order.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import { silentLogger } from '../../src/logger.ts';
import type { AgentHarness } from '../../test/support/agent-harness.ts';
import { openHarness } from '../agent.ts';
import { generateThread, type GeneratedMail } from '../generate-mail.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, NO_TARGET, round, type Figure, type PhaseResult } from '../report.ts';
import { startModelProcess } from './worker-throughput.ts';

const MODEL_LATENCY_MS = 1000;
/** Each process's WORKER_CONCURRENCY. */
const CONCURRENCY = 8;
const WORKER_ENTRY = path.join(import.meta.dirname, '..', '..', 'workers', 'message-worker.ts');

interface ScaleRun {
  processes: number;
  /** Turns in the timed part (each thread's first message) and in the whole run. */
  timedTurns: number;
  turns: number;
  seconds: number;
  rate: number;
  /** Turns with more than one draft, and customer messages answered by no turn or by one that drafted nothing. */
  draftedTwice: number;
  unanswered: number;
  /** Threads whose turns overlapped in time or answered a later message before an earlier one. */
  outOfOrder: number;
}

/** One customer thread of three messages per seed. */
async function threads(seed: number, count: number): Promise<GeneratedMail[][]> {
  return Promise.all(Array.from({ length: count }, (_, i) => generateThread({ seed: seed + i, length: 3, meanGapHours: 1 })));
}

function startWorkerProcess(ctx: PhaseContext, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_ENTRY], {
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  ctx.defer('stop a worker process', async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  });
  return child;
}

/** Stores one message, as the poller does when `enqueue` (its turn job follows); its thread. */
async function ingest(h: AgentHarness, mail: GeneratedMail, uid: number, enqueue: boolean): Promise<string> {
  const deps = h.runtime.ingestDeps({ logger: silentLogger, ...(enqueue ? {} : { pipeline: null }) });
  const source = { kind: 'imap' as const, folder: 'INBOX', uid };
  const r = await ingestRawMessage(deps, mail.raw, source, { receivedAt: mail.date, now: new Date(mail.date.getTime() + 60_000) });
  if (!r.threadId || !r.replyNeeded) throw new Error(`generated message ${uid} needs no reply (${r.skipReason ?? 'no thread'})`);
  return r.threadId;
}

/** Until every process has its turns worker connected to Redis, so the clock does not time a process's start-up. */
async function workersReady(h: AgentHarness, processes: number, children: readonly ChildProcess[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await h.runtime.queues().turns.getWorkersCount()) < processes) {
    if (children.some((c) => c.exitCode !== null || c.signalCode !== null)) throw new Error('a worker process exited while starting');
    if (Date.now() > deadline) throw new Error(`the ${processes} worker processes did not connect in 2 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Until no customer message waits for a reply or sits in an unfinished turn. */
async function waitForReplies(h: AgentHarness, children: readonly ChildProcess[]): Promise<void> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const waiting = await h.runtime.db.message.count({ where: { direction: 'inbound', status: { in: ['pending_reply', 'in_turn'] } } });
    if (waiting === 0) return;
    const dead = children.find((c) => c.exitCode !== null || c.signalCode !== null);
    if (dead) throw new Error(`a worker process exited (${dead.exitCode ?? dead.signalCode}) with ${waiting} messages waiting`);
    if (Date.now() > deadline) throw new Error(`${waiting} messages still waiting after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function scaleRun(ctx: PhaseContext, processes: number, work: readonly GeneratedMail[][]): Promise<ScaleRun> {
  const model = await startModelProcess(ctx, MODEL_LATENCY_MS);
  // The generated mail is dated 2025, so every thread would look quiet and due for promotion at
  // once; promotion passes are not what this phase measures (the scripted model answers turns only).
  // Attachments are not read (ATTACHMENT_MAX_FILES=0): the bench process ingests while the workers
  // run, and reading them would make its ingestion, not the workers, the bottleneck.
  const quiet = { QUIET_AFTER: '36500d', PROMOTE_EVERY: '36500d', ATTACHMENT_MAX_FILES: '0' };
  const h = await openHarness(ctx, { WORKER_CONCURRENCY: String(CONCURRENCY), OPENAI_BASE_URL: model, ...quiet }, { workers: false });
  // Timed: every thread's first message is stored before the processes start; once all are
  // connected, every thread's turn job is enqueued at once.
  let uid = 1;
  const first: string[] = [];
  for (const thread of work) first.push(await ingest(h, thread[0]!, uid++, false));
  const children = Array.from({ length: processes }, () => startWorkerProcess(ctx, h.env));
  await workersReady(h, processes, children);
  for (const threadId of first) await h.runtime.queues().enqueueTurn(threadId);
  await waitForReplies(h, children);
  const timed = await check(h);
  // Not timed, for order: two more messages per thread through the poller's path (which enqueues),
  // back to back, so the third often lands while the second's turn runs, in either process.
  for (const thread of work) {
    await ingest(h, thread[1]!, uid++, true);
    await ingest(h, thread[2]!, uid++, true);
  }
  await waitForReplies(h, children);
  const checks = await check(h);
  return { processes, ...checks, timedTurns: timed.turns, seconds: timed.seconds, rate: timed.turns / timed.seconds };
}

/** What the database says about the run: timing from the turns' own clocks, duplicates and order. */
async function check(h: AgentHarness): Promise<Omit<ScaleRun, 'processes' | 'rate' | 'timedTurns'>> {
  const turns = await h.runtime.db.turn.findMany({
    select: { id: true, threadId: true, startedAt: true, finishedAt: true, draft: { select: { id: true } } },
    orderBy: { startedAt: 'asc' },
  });
  const messages = await h.runtime.db.message.findMany({
    where: { direction: 'inbound' },
    select: { turnId: true, threadId: true, status: true, sentAt: true, receivedAt: true },
  });
  const drafted = new Set(turns.filter((t) => t.draft !== null).map((t) => t.id));
  const unanswered = messages.filter((m) => m.turnId === null || !drafted.has(m.turnId) || m.status !== 'replied').length;
  const byThread = new Map<string, typeof turns>();
  for (const t of turns) byThread.set(t.threadId, [...(byThread.get(t.threadId) ?? []), t]);
  let draftedTwice = 0;
  let outOfOrder = 0;
  const at = (turnId: string) => messages.filter((m) => m.turnId === turnId).map((m) => (m.sentAt ?? m.receivedAt).getTime());
  for (const [threadId, list] of byThread) {
    // More drafts than turns that answered the thread's messages: some message was answered twice.
    const answering = new Set(messages.filter((m) => m.threadId === threadId && m.turnId !== null).map((m) => m.turnId));
    if (list.filter((t) => t.draft !== null).length > answering.size) draftedTwice++;
    const bad = list.some((t, i) => {
      const next = list[i + 1];
      if (!next) return false;
      const overlapped = (t.finishedAt?.getTime() ?? Infinity) > next.startedAt.getTime();
      return overlapped || Math.max(...at(t.id)) > Math.min(...at(next.id));
    });
    if (bad) outOfOrder++;
  }
  const first = Math.min(...turns.map((t) => t.startedAt.getTime()));
  const last = Math.max(...turns.map((t) => t.finishedAt?.getTime() ?? 0));
  return { turns: drafted.size, seconds: (last - first) / 1000, draftedTwice, unanswered, outOfOrder };
}

export async function runScaleOut(ctx: PhaseContext): Promise<PhaseResult> {
  const count = ctx.quick ? 48 : 128;
  const one = await ctx.scope(async () => scaleRun(ctx, 1, await threads(ctx.seed + 4001, count)));
  ctx.log(`one process: ${one.timedTurns} timed turns in ${one.seconds.toFixed(1)} s (${one.rate.toFixed(2)}/s)`);
  const two = await ctx.scope(async () => scaleRun(ctx, 2, await threads(ctx.seed + 5001, count)));
  ctx.log(`two processes: ${two.timedTurns} timed turns in ${two.seconds.toFixed(1)} s (${two.rate.toFixed(2)}/s)`);
  const describe = (r: ScaleRun) =>
    `${r.processes} process(es) × WORKER_CONCURRENCY ${CONCURRENCY}: ${r.timedTurns} timed turns in ${r.seconds.toFixed(2)} s (first turn's start to last turn's finish, the turns' own clocks), ${r.turns} turns in all, ${r.draftedTwice} drafted twice, ${r.unanswered} messages unanswered, ${r.outOfOrder} threads out of order`;
  const figures: Figure[] = [
    figure({
      name: '8. scale-out: turns/s, two worker processes vs one',
      value: two.rate,
      unit: 'turns/s',
      baseline: one.rate,
      target: 'reported (ideal 2.0: the 1 s model bounds each process at its concurrency)',
      met: null,
      notes: `${count} threads of three messages: the first timed, the two follow-ups for the order checks; the model answers after ${MODEL_LATENCY_MS} ms; ${describe(one)}; ${describe(two)}`,
    }),
    figure({
      name: '8. scale-out: turns drafted twice or out of thread order, two processes',
      value: two.draftedTwice + two.unanswered + two.outOfOrder,
      unit: 'turns',
      baseline: null,
      target: '0',
      met: two.draftedTwice + two.unanswered + two.outOfOrder === 0 && one.draftedTwice + one.unanswered + one.outOfOrder === 0,
      notes: `checked in PostgreSQL after the run: turns with more than one draft, customer messages in no drafted turn, threads whose turns overlapped or answered a later message first; ${describe(two)}; ${describe(one)}`,
    }),
  ];
  return {
    figures,
    inputs: {
      'scale-out': {
        method:
          'per run: a fresh agent (PostgreSQL database, Redis prefix), the scripted model in a process of its own (1 s), N worker processes (`node --import tsx workers/message-worker.ts` with the agent environment); first messages stored before, their turn jobs enqueued at once when all are connected (timed); then two follow-ups per thread through the poller path (which enqueues), untimed',
        concurrencyPerProcess: CONCURRENCY,
        threads: count,
        runs: [one, two].map((r) => ({ ...r, seconds: round(r.seconds, 3), rate: round(r.rate, 3) })),
        notMeasured: 'two poller processes on one mailbox (the lease): not part of this phase yet',
        targetNote: NO_TARGET,
      },
    },
  };
}
