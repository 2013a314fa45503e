/**
 * Each benchmark phase runs in a child process of its own, so its RSS figures are its own (not
 * the leftovers of an earlier phase) and a crash or hang in one phase cannot take the others down.
 * This file is both sides of that protocol: `runPhase` in the parent, `PhaseContext` in the child.
 *
 * Cleanup is layered: a phase defers every cleanup it needs the moment it creates a resource; the
 * child runs them on success, failure and SIGINT/SIGTERM; and the child reports every database,
 * Redis prefix and directory it creates, so the parent can sweep them even after a SIGKILL.
 */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { deleteRedisPrefix } from '../test/support/agent-harness.ts';
import { ADMIN_URL } from '../test/support/postgres.ts';
import type { PhaseResult } from './report.ts';

export type Resource = { kind: 'database'; name: string } | { kind: 'redis-prefix'; prefix: string } | { kind: 'directory'; path: string };

export interface PhaseOptions {
  quick: boolean;
  seed: number;
  /** Names every resource of the run, so they can be told apart from other people's. */
  runId: string;
  params?: Record<string, unknown>;
}

export interface PhaseContext extends PhaseOptions {
  /** Registers a cleanup; run last-in first-out when the enclosing scope (or the phase) ends, however it ends. */
  defer(what: string, cleanup: () => Promise<void>): void;
  /** Runs `body`; the cleanups it defers run when it ends, not at the end of the phase. */
  scope<T>(body: () => Promise<T>): Promise<T>;
  /** Tells the parent about a resource to sweep should this process die without cleaning up. */
  track(resource: Resource): void;
  log(message: string): void;
}

type ChildMessage = { type: 'resource'; resource: Resource } | { type: 'result'; result: PhaseResult } | { type: 'error'; error: string };

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');

/** Starts `bench/phase-child.ts <name>` and resolves with its result; rejects when it fails or times out. */
export function runPhase(
  name: string,
  options: PhaseOptions,
  timeoutMs: number,
  onResource: (resource: Resource) => void,
): Promise<PhaseResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--expose-gc', path.join(HERE, 'phase-child.ts'), name, JSON.stringify(options)],
      {
        cwd: ROOT,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    let result: PhaseResult | null = null;
    let error: string | null = null;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      // SIGTERM lets the child run its cleanups; SIGKILL if it does not manage in time.
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
    }, timeoutMs);
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'resource') onResource(message.resource);
      else if (message.type === 'result') result = message.result;
      else error = message.error;
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (result && code === 0) resolve(result);
      else if (timedOut) reject(new Error(`phase ${name} did not finish within ${Math.round(timeoutMs / 1000)} s`));
      else reject(new Error(error ?? `phase ${name} exited with ${signal ?? `code ${code}`}`));
    });
  });
}

/** Removes whatever a phase process reported; harmless for resources it already removed. */
export async function sweep(resources: readonly Resource[]): Promise<string[]> {
  const problems: string[] = [];
  const databases = resources.filter((r): r is Extract<Resource, { kind: 'database' }> => r.kind === 'database');
  if (databases.length > 0) {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    try {
      await admin.connect();
      for (const db of databases) {
        await admin
          .query(`DROP DATABASE IF EXISTS "${db.name.replace(/"/g, '')}" WITH (FORCE)`)
          .catch((e: unknown) => problems.push(`drop ${db.name}: ${String(e)}`));
      }
    } catch (e) {
      problems.push(`connect to PostgreSQL: ${String(e)}`);
    } finally {
      await admin.end().catch(() => {});
    }
  }
  for (const r of resources) {
    if (r.kind === 'redis-prefix')
      await deleteRedisPrefix(r.prefix).catch((e: unknown) => problems.push(`redis ${r.prefix}: ${String(e)}`));
    if (r.kind === 'directory')
      await rm(r.path, { recursive: true, force: true }).catch((e: unknown) => problems.push(`rm ${r.path}: ${String(e)}`));
  }
  return problems;
}

/** The child's half: cleanups, resource reports and the result message. */
export class ChildRuntime {
  private readonly cleanups: Array<{ what: string; run: () => Promise<void> }> = [];

  constructor(private readonly name: string) {}

  context(options: PhaseOptions): PhaseContext {
    return {
      ...options,
      defer: (what, run) => {
        this.cleanups.push({ what, run });
      },
      scope: async (body) => {
        const depth = this.cleanups.length;
        try {
          return await body();
        } finally {
          await this.unwind(depth);
        }
      },
      // Fire and forget: the parent learns of the resource as soon as IPC delivers it.
      track: (resource) => void this.send({ type: 'resource', resource }),
      log: (message) => process.stderr.write(`[${this.name}] ${message}\n`),
    };
  }

  /** Runs the cleanups above `depth`, newest first; one failing does not stop the others. */
  async unwind(depth = 0): Promise<void> {
    while (this.cleanups.length > depth) {
      const cleanup = this.cleanups.pop()!;
      try {
        await cleanup.run();
      } catch (error) {
        process.stderr.write(`[${this.name}] cleanup "${cleanup.what}" failed: ${String(error)}\n`);
      }
    }
  }

  send(message: ChildMessage): Promise<void> {
    return new Promise((resolve) => {
      if (!process.send) return resolve();
      process.send(message, undefined, {}, () => resolve());
    });
  }
}
