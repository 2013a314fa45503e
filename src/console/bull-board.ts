/**
 * Bull Board, mounted read-only: PostgreSQL is the source of truth and the reconciler rebuilds
 * jobs from it, so the board is for looking (depths, failures, payloads), not for adding, editing
 * or cleaning jobs, which could bypass draft review.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { JobQueues } from '../queue/jobs.ts';

export const BULL_BOARD_PATH = '/health/queues';

export function bullBoardApp(queues: JobQueues) {
  const adapter = new HonoAdapter(serveStatic);
  createBullBoard({
    queues: [queues.turns, queues.promotions, queues.outbox].map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Support agent queues' } },
  });
  adapter.setBasePath(BULL_BOARD_PATH);
  return adapter.registerPlugin();
}
