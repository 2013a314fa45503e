/**
 * The BullMQ workers of the queues: reply turns, the outbox, promotions, and the reconciler that
 * rebuilds jobs from PostgreSQL (`support-agent work`, and part of `start`). Wiring only: parse
 * the job, call the pipeline's transition, and on a job's last failed attempt call the pipeline's
 * final-failure transition.
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { describeError, isAppError } from '../errors.ts';
import { outboxJobSchema, parseJobData, promotionJobSchema, QUEUES, turnJobSchema } from '../queue/jobs.ts';
import type { Runtime } from './runtime.ts';

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

function threadOf(job: Job | undefined): string | null {
  const threadId = (job?.data as { threadId?: unknown } | undefined)?.threadId;
  return typeof threadId === 'string' ? threadId : null;
}

export async function startWorkers(runtime: Runtime, options: { reconcileOnStart?: boolean } = {}): Promise<RunningWorkers> {
  const { config, logger } = runtime;
  const pipeline = runtime.pipeline();
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
    (job) => unrecoverable(async () => (await pipeline.runTurn(parseJobData(turnJobSchema, job.data, QUEUES.turns).threadId)).kind),
    { ...common, concurrency: config.worker.concurrency },
  );
  const outbox = new Worker(
    QUEUES.outbox,
    (job) =>
      unrecoverable(async () => {
        const { draftId, action } = parseJobData(outboxJobSchema, job.data, QUEUES.outbox);
        return pipeline.runOutbox(draftId, action);
      }),
    { ...common, concurrency: 2 },
  );
  const promotions = new Worker(
    QUEUES.promotions,
    (job) =>
      unrecoverable(async () => {
        const { threadId, trigger } = parseJobData(promotionJobSchema, job.data, QUEUES.promotions);
        return (await pipeline.runPromotion(threadId, trigger)).kind;
      }),
    { ...common, concurrency: 1 },
  );

  const onFinalFailure = (queue: string, job: Job | undefined, error: Error, transition: (threadId: string) => Promise<void>) => {
    logger.warn(`${queue} job failed`, { jobId: job?.id, attempts: job?.attemptsMade, error: error.message });
    const threadId = threadOf(job);
    if (!finalAttempt(job, error) || threadId === null) return;
    transition(threadId).catch((e: unknown) =>
      logger.error(`could not handle the failed ${queue} job`, { threadId, error: describeError(e) }),
    );
  };
  turns.on('failed', (job, error) => onFinalFailure('turn', job, error, (threadId) => pipeline.turnFailed(threadId, error.message)));
  promotions.on('failed', (job, error) =>
    onFinalFailure('promotion', job, error, (threadId) => pipeline.promotionFailed(threadId, error.message)),
  );
  outbox.on('failed', (job, error) => logger.warn('outbox job failed', { jobId: job?.id, error: error.message }));
  // A Worker without an 'error' listener throws into the process (EventEmitter semantics): a
  // lost Redis key or connection must be a log line, never a crash.
  for (const [name, worker] of [
    ['turns', turns],
    ['outbox', outbox],
    ['promotions', promotions],
  ] as const) {
    worker.on('error', (error) => logger.warn('queue worker error', { queue: name, error: describeError(error) }));
  }

  const runReconcile = async () => {
    try {
      logger.debug('reconciled', { ...(await pipeline.reconcile()) });
    } catch (error) {
      logger.warn('reconcile failed', { error: describeError(error) });
    }
  };
  if (options.reconcileOnStart !== false) await runReconcile();
  const timer = setInterval(() => void runReconcile(), config.worker.reconcileIntervalMs);
  logger.info('workers started', {
    concurrency: config.worker.concurrency,
    mailboxes: runtime.mailboxes.map((m) => `${m.mailbox.address} (${m.settings.replyMode})`),
    llm: runtime.provider.name,
  });

  return {
    close: async () => {
      clearInterval(timer);
      await Promise.all([turns.close(), outbox.close(), promotions.close()]);
    },
  };
}
