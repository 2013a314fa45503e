/**
 * What every console request handler can reach: the runtime (database, queues, policy) and, once
 * logged in, the operator's session. Kept in Hono's typed context so handlers stay plain functions.
 */
import type { Context } from 'hono';
import type { Runtime } from '../app/runtime.ts';

export interface Session {
  /** Secret cookie value; never logged. */
  readonly id: string;
  /** Per-session token every form carries in a hidden field; never logged. */
  readonly csrfToken: string;
  readonly createdAt: number;
  lastSeenAt: number;
}

export interface ConsoleEnv {
  Variables: {
    runtime: Runtime;
    session: Session;
  };
}

export type ConsoleContext = Context<ConsoleEnv>;
