/**
 * The agent under test, opened the way the tests open it (test/support/agent-harness.ts: a fresh
 * PostgreSQL database, a Redis prefix of its own, the scripted LLM server, an SMTP sink, the real
 * runtime), plus the bookkeeping a benchmark needs: every resource is reported to the parent and
 * closed when the enclosing scope ends.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openRuntime, type Runtime } from '../src/app/runtime.ts';
import { loadConfig } from '../src/config.ts';
import type { IngestDeps } from '../src/ingest/ingest-message.ts';
import { silentLogger } from '../src/logger.ts';
import { deleteRedisPrefix, REDIS_URL, startAgentHarness, type AgentHarness } from '../test/support/agent-harness.ts';
import type { PhaseContext } from './phase-process.ts';

/**
 * Settings every benchmark agent shares: no flood limits (they would turn turns into no-ops). The
 * loop guard still runs (its reads and writes are part of a turn's cost); it just never trips.
 */
export const BENCH_ENV: Record<string, string> = {
  REPLY_MODE: 'draft',
  REPLY_LIMIT_PER_HOUR: '1000000',
  REPLY_LIMIT_PER_DAY: '1000000',
  LOOP_MAX_REPLIES: '1000000',
  ...extraEnv(process.env['BENCH_AGENT_ENV']),
};

/**
 * `BENCH_AGENT_ENV="ATTACHMENT_MAX_FILES=0,KEY=value"`: settings added to every benchmark agent, to
 * see what one setting costs (e.g. ingestion without reading attachments). Not for committed figures.
 */
function extraEnv(spec: string | undefined): Record<string, string> {
  const pairs = (spec ?? '').split(',').filter((p) => p.trim() !== '');
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`BENCH_AGENT_ENV: "${pair}" is not KEY=value`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    }),
  );
}

export async function openHarness(
  ctx: PhaseContext,
  overrides: Record<string, string>,
  options: { workers?: boolean } = {},
): Promise<AgentHarness> {
  const harness = await startAgentHarness({ ...BENCH_ENV, ...overrides }, { workers: false });
  ctx.track({ kind: 'database', name: new URL(harness.env['DATABASE_URL'] ?? 'postgresql://x/unknown').pathname.slice(1) });
  ctx.track({ kind: 'redis-prefix', prefix: harness.prefix });
  ctx.defer('close the agent harness', () => harness.close());
  if (options.workers) await harness.startWorkers();
  return harness;
}

/**
 * The runtime on embedded PGlite, as the product runs without DATABASE_URL: a file-backed
 * database in DATA_DIR (`openDatabase({ databaseUrl: undefined, dataDir })`), migrated by `openRuntime`.
 */
export async function openPgliteRuntime(ctx: PhaseContext): Promise<Runtime> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `sa-bench-${ctx.runId}-pglite-`));
  ctx.track({ kind: 'directory', path: dataDir });
  ctx.defer('remove the PGlite data dir', () => rm(dataDir, { recursive: true, force: true }));
  const prefix = `sa-bench-${ctx.runId}-pglite`;
  ctx.track({ kind: 'redis-prefix', prefix });
  ctx.defer('delete the Redis keys', async () => {
    await deleteRedisPrefix(prefix);
  });
  const config = loadConfig({
    ...BENCH_ENV,
    DATA_DIR: dataDir,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    SUPPORT_ADDRESS: 'support@acme.example',
    SUPPORT_NAME: 'Acme Support',
    LLM_PROVIDER: 'offline',
  });
  const runtime = await openRuntime(config, silentLogger, { longRunning: true });
  ctx.defer('close the PGlite runtime', () => runtime.close());
  return runtime;
}

/** Ingestion wired like the poller's: the reply turn is enqueued on BullMQ once the message is stored. */
export function pollerIngestDeps(runtime: Runtime): IngestDeps {
  return runtime.ingestDeps({ logger: silentLogger });
}
