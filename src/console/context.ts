/**
 * What every console request handler can reach: the runtime (database, queues, policy) and, once
 * logged in, the operator's session. Kept in Hono's typed context so handlers stay plain functions.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { Runtime } from '../app/runtime.ts';

export interface Session {
  /** Secret cookie value; never logged. */
  readonly id: string;
  /** Per-session token every form carries in a hidden field; never logged. */
  readonly csrfToken: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** Which model drafts are made with (the header shows it to every signed-in page); not stored. */
  model?: string;
}

/** How the console sees a request once the host check passed (see request-guard.ts). */
export interface RequestView {
  /** The client's address: the socket's peer, or the client a trusted proxy names; null if unknown. */
  readonly client: string | null;
  /** The origin the request was addressed to (scheme and host, as a browser's Origin header writes it). */
  readonly origin: string;
  /** CONSOLE_PUBLIC_URL's origin, when set: a browser's Origin may also be this. */
  readonly publicOrigin: string | null;
  /** Whether cookies get the Secure attribute. */
  readonly secureCookies: boolean;
}

export interface ConsoleEnv {
  /** The Node server's request; absent for in-process requests (`app.request` in tests). */
  Bindings: { incoming?: IncomingMessage };
  Variables: {
    runtime: Runtime;
    session: Session;
    request: RequestView;
  };
}

export type ConsoleContext = Context<ConsoleEnv>;
