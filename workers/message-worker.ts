/**
 * The worker process's queues: reply turns, the outbox, promotions, and the reconciler that
 * rebuilds jobs from PostgreSQL. Thin: parse the job, call the use case, hand on.
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { handleThreadTurn, handTurnToHuman } from '../src/app/handle-thread-turn.ts';
import { afterTurn } from '../src/app/pipeline.ts';
import { promoteThread } from '../src/app/promote-thread.ts';
import { reconcile } from '../src/app/reconcile.ts';
import type { Runtime } from '../src/app/runtime.ts';
import { describeError, isAppError } from '../src/errors.ts';
import { appendDraft, sendDraft } from '../src/outbound/outbox.ts';
import { countPendingReplies, markPromotionFailed } from '../src/store/turns.ts';
import { outboxJobSchema, parseJobData, promotionJobSchema, QUEUES, turnJobSchema } from '../src/queue/jobs.ts';

export interface RunningWorkers {
  close(): Promise<void>;
}

/** Our permanent errors must not be retried; anything else is a retryable attempt. */
function unrecoverable<T>(work: () => Promise<T>): Promise<T> {
  return work().catch((error: unknown) => {
    if (isAppError(error) && !error.retryable) throw new UnrecoverableError(describeError(error));
    throw error;
  });
}

function finalAttempt(job: Job | undefined, error: Error): boolean {
  return job !== undefined && (error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1));
}

export async function startWorkers(runtime: Runtime, options: { reconcileOnStart?: boolean } = {}): Promise<RunningWorkers> {
  const { config, logger } = runtime;
  const connection = runtime.redis();
  // A worker that dies mid-job (SIGKILL, power loss) stops renewing its lock; after lockDuration the
  // job counts as stalled and another worker retries it.
  const common = {
    connection,
    prefix: config.queuePrefix,
    lockDuration: config.worker.lockDurationMs,
    stalledInterval: config.worker.lockDurationMs,
    maxStalledCount: 3,
  };

  const turns = new Worker(
    QUEUES.turns,
    (job) =>
      unrecoverable(async () => {
        const { threadId } = parseJobData(turnJobSchema, job.data, QUEUES.turns);
        const outcome = await handleThreadTurn(runtime.turnDeps(), threadId);
        await afterTurn(runtime, threadId, outcome);
        // A message that arrived while this turn ran, or one from another sender, gets its own turn next.
        const more = await countPendingReplies(runtime.db, threadId);
        if (more > 0) await runtime.queues().enqueueTurn(threadId);
        return outcome.kind;
      }),
    { ...common, concurrency: config.worker.concurrency },
  );
  turns.on('failed', (job, error) => {
    logger.warn('turn job failed', { jobId: job?.id, attempts: job?.attemptsMade, error: error.message });
    const threadId = (job?.data as { threadId?: unknown } | undefined)?.threadId;
    if (!finalAttempt(job, error) || typeof threadId !== 'string') return;
    handTurnToHuman(runtime.turnDeps(), threadId, error.message)
      .then(async (draftId) => {
        if (draftId) await afterTurn(runtime, threadId, { kind: 'drafted', turnId: '', draftId, needsHuman: true, resolved: false, queuedToSend: false, promptTokens: 0 });
      })
      .catch((e: unknown) => logger.error('could not hand the turn to a human', { threadId, error: describeError(e) }));
  });

  const outbox = new Worker(
    QUEUES.outbox,
    (job) =>
      unrecoverable(async () => {
        const { draftId, action } = parseJobData(outboxJobSchema, job.data, QUEUES.outbox);
        return action === 'send' ? sendDraft(runtime.outboxDeps(), draftId) : appendDraft(runtime.outboxDeps(), draftId);
      }),
    { ...common, concurrency: 2 },
  );
  outbox.on('failed', (job, error) => logger.warn('outbox job failed', { jobId: job?.id, error: error.message }));

  const promotions = new Worker(
    QUEUES.promotions,
    (job) =>
      unrecoverable(async () => {
        const { threadId, trigger } = parseJobData(promotionJobSchema, job.data, QUEUES.promotions);
        const outcome = await promoteThread(runtime.promotionDeps(), threadId, trigger);
        if (outcome.kind === 'not-quiet') {
          await runtime.queues().schedulePromotion(threadId, 'quiet', outcome.dueAt.getTime() - Date.now());
        }
        return outcome.kind;
      }),
    { ...common, concurrency: 1 },
  );
  promotions.on('failed', (job, error) => {
    logger.warn('promotion job failed', { jobId: job?.id, attempts: job?.attemptsMade, error: error.message });
    const threadId = (job?.data as { threadId?: unknown } | undefined)?.threadId;
    if (!finalAttempt(job, error) || typeof threadId !== 'string') return;
    // Every retry is used: the thread stops asking for promotion until new mail arrives.
    markPromotionFailed(runtime.db, threadId, error.message, new Date()).catch((e: unknown) =>
      logger.error('could not record the failed promotion', { threadId, error: describeError(e) }),
    );
  });

  // A Worker without an 'error' listener throws into the process (EventEmitter semantics): a
  // lost Redis key or connection must be a log line, never a crash.
  for (const [name, worker] of [['turns', turns], ['outbox', outbox], ['promotions', promotions]] as const) {
    worker.on('error', (error) => logger.warn('queue worker error', { queue: name, error: describeError(error) }));
  }

  const runReconcile = async () => {
    try {
      const report = await reconcile(runtime);
      logger.debug('reconciled', { ...report });
    } catch (error) {
      logger.warn('reconcile failed', { error: describeError(error) });
    }
  };
  if (options.reconcileOnStart !== false) await runReconcile();
  const timer = setInterval(() => void runReconcile(), config.worker.reconcileIntervalMs);
  logger.info('workers started', { concurrency: config.worker.concurrency, replyMode: config.replyMode, llm: runtime.provider.name });

  return {
    close: async () => {
      clearInterval(timer);
      await Promise.all([turns.close(), outbox.close(), promotions.close()]);
    },
  };
}
