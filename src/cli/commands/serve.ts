/**
 * The long-running commands: `start` (everything in one process), `work` and `poll`.
 */
import { createAppLogger } from '../../app/logging.ts';
import { openRuntime, type Runtime } from '../../app/runtime.ts';
import { loadConfig } from '../../config.ts';
import { Redis } from 'ioredis';
import { AppError, describeError } from '../../errors.ts';
import { redactUrl } from '../../store/database.ts';
import { startPoller } from '../../app/start-poller.ts';
import { startWorkers } from '../../app/start-workers.ts';
import { OPERATOR_RESPONSE_LIMIT, serveOperatorCommands, type OperatorServer } from '../operator-socket.ts';
import { runServed } from '../output.ts';

export interface ServeParts {
  poll: boolean | 'if-configured';
  work: boolean;
  console: boolean | 'if-configured';
  consolePort?: number;
}

export async function runServe(parts: ServeParts): Promise<void> {
  const config = loadConfig();
  const logger = createAppLogger(config);
  await assertRedisReachable(config.redisUrl);
  const runtime = await openRuntime(config, logger, { longRunning: true });
  const stops: Array<() => Promise<void>> = [];
  try {
    if (parts.work) {
      const workers = await startWorkers(runtime);
      stops.push(() => workers.close());
    }
    if (parts.poll === true || (parts.poll === 'if-configured' && runtime.imapConfigured)) {
      const poller = startPoller(runtime);
      stops.push(() => poller.stop());
    } else if (parts.poll === 'if-configured') {
      logger.warn(
        'IMAP is not configured (IMAP_HOST, IMAP_USER, IMAP_PASSWORD): not polling a mailbox. Use `support-agent replay` to feed .eml files.',
      );
    }
    if (runtime.database.kind === 'pglite') {
      // One process owns the embedded database: operator commands come to it (src/cli/operator-socket.ts).
      const operator = await serveOperators(runtime);
      if (operator) stops.push(() => operator.close());
    }
    if (parts.console === true || (parts.console === 'if-configured' && config.console.password)) {
      const { startConsole } = await import('../../console/server.ts');
      const server = await startConsole(runtime, { port: parts.consolePort ?? config.console.port });
      stops.push(() => server.close());
    } else if (parts.console === 'if-configured') {
      logger.warn('CONSOLE_PASSWORD is not set: the review console is not started.');
    }
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await runtime.close();
    throw error;
  }
  logger.info('running; press Ctrl+C to stop', { database: runtime.database.kind });
  await waitForShutdownSignal();
  logger.info('shutting down');
  for (const stop of stops.reverse()) {
    await stop().catch((error: unknown) => logger.warn('shutdown step failed', { error: describeError(error) }));
  }
  await runtime.close();
  logger.info('stopped');
}

async function serveOperators(runtime: Runtime): Promise<OperatorServer | null> {
  // Loaded here, not at the top: the CLI's entry point imports this module.
  const { main } = await import('../main.ts');
  try {
    const server = await serveOperatorCommands({
      dataDir: runtime.config.dataDir,
      run: (argv) => runServed(runtime, () => main(argv), OPERATOR_RESPONSE_LIMIT),
      logger: runtime.logger,
    });
    runtime.logger.info('operator commands served beside the agent', { socket: server.path });
    return server;
  } catch (error) {
    runtime.logger.warn('cannot serve operator commands: they need the agent stopped, or PostgreSQL', { error: describeError(error) });
    return null;
  }
}

/** Fail at once with a clear message rather than wait forever for a Redis that is not there. */
async function assertRedisReachable(url: string): Promise<void> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 5000 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
  } catch {
    throw new AppError('REDIS_UNAVAILABLE', `cannot reach Redis at ${redactUrl(url)} (REDIS_URL); the queues need it`);
  } finally {
    probe.disconnect();
  }
}

function waitForShutdownSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
