/**
 * The long-running commands: `start` (everything in one process), `work` and `poll`.
 */
import { createAppLogger } from '../../app/logging.ts';
import { openRuntime, type Runtime } from '../../app/runtime.ts';
import { loadConfig, type Config } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import { Redis } from 'ioredis';
import { AppError, describeError } from '../../errors.ts';
import { describeModel } from '../../llm/create-provider.ts';
import { redactUrl } from '../../store/database.ts';
import { startPollers } from '../../app/start-poller.ts';
import { startWorkers } from '../../app/start-workers.ts';
import { OPERATOR_RESPONSE_LIMIT, serveOperatorCommands, type OperatorServer } from '../operator-socket.ts';
import { runServed } from '../output.ts';

/** Runs a CLI command line in this process (the agent serves operator commands with it). */
export type RunCommand = (argv: string[]) => Promise<number>;

export interface ServeParts {
  poll: boolean | 'if-configured';
  work: boolean;
  console: boolean | 'if-configured';
  consolePort?: number;
}

/**
 * How long a stop may take after SIGTERM or SIGINT before the process exits anyway: less than
 * Docker's and systemd's default wait before SIGKILL (10 s and 90 s), so the last log line says why.
 */
const SHUTDOWN_DEADLINE_MS = 9_000;

/** `runCommand` runs an operator's command line in this process (the CLI's own entry point, passed in). */
export async function runServe(parts: ServeParts, runCommand: RunCommand): Promise<void> {
  const config = loadConfig();
  const logger = createAppLogger(config);
  // Listening from the first moment: a signal during start-up (migrations can take a while) stops
  // the process as soon as it is up, and as PID 1 in a container a signal without a listener is ignored.
  const shutdown = shutdownSignal(logger);
  try {
    await serveUntilSignal(parts, runCommand, config, logger, shutdown.received);
  } finally {
    shutdown.dispose();
  }
}

async function serveUntilSignal(
  parts: ServeParts,
  runCommand: RunCommand,
  config: Config,
  logger: Logger,
  signalled: Promise<NodeJS.Signals>,
): Promise<void> {
  await assertRedisReachable(config.redisUrl);
  const runtime = await openRuntime(config, logger, { longRunning: true });
  if (parts.work) logger.info(describeModel(config.llm));
  const stops: Array<() => Promise<void>> = [];
  try {
    if (parts.work) {
      const workers = await startWorkers(runtime);
      stops.push(() => workers.close());
    }
    if (parts.poll === true || (parts.poll === 'if-configured' && runtime.mailboxes.some((m) => m.imapLogin))) {
      const pollers = startPollers(runtime, parts.poll === true ? 'all' : 'configured');
      stops.push(() => pollers.stop());
    } else if (parts.poll === 'if-configured') {
      logger.warn(
        'IMAP is not configured (IMAP_HOST, IMAP_USER, and IMAP_PASSWORD or MAIL_AUTH=oauth2): not polling a mailbox. Use `support-agent replay` to feed .eml files.',
      );
    }
    if (runtime.database.kind === 'pglite') {
      // One process owns the embedded database: operator commands come to it (src/cli/operator-socket.ts).
      const operator = await serveOperators(runtime, runCommand);
      if (operator) stops.push(() => operator.close());
    }
    if (parts.console === true || (parts.console === 'if-configured' && config.console.password)) {
      const { startConsole } = await import('../../console/server.ts');
      const server = await startConsole(runtime, {
        port: parts.consolePort ?? config.console.port,
        allowOneTimeLogin: parts.console === true,
      });
      stops.push(() => server.close());
      // On the terminal only, never in a log: the link is a credential for one session.
      if (server.loginUrl) process.stderr.write(`console: open ${server.loginUrl} (a one-time login link, for this machine only)\n`);
    } else if (parts.console === 'if-configured') {
      logger.warn('CONSOLE_PASSWORD is not set: the review console is not started.');
    }
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await runtime.close();
    throw error;
  }
  logger.info('running; press Ctrl+C to stop', { database: runtime.database.kind });
  const signal = await signalled;
  logger.info('shutting down', { signal });
  for (const stop of stops.reverse()) {
    await stop().catch((error: unknown) => logger.warn('shutdown step failed', { error: describeError(error) }));
  }
  await runtime.close();
  logger.info('stopped');
}

async function serveOperators(runtime: Runtime, runCommand: RunCommand): Promise<OperatorServer | null> {
  try {
    const server = await serveOperatorCommands({
      dataDir: runtime.config.dataDir,
      run: (argv) => runServed(runtime, () => runCommand(argv), OPERATOR_RESPONSE_LIMIT),
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

/**
 * The first SIGTERM or SIGINT starts the stop. Later ones are absorbed: `npm start` in a terminal
 * delivers Ctrl+C twice (the terminal signals the whole group and npm forwards its own copy), and
 * without a listener the second would kill the process halfway through closing the database. A
 * stop (or a handle left open after it) that outlives SHUTDOWN_DEADLINE_MS ends the process with exit code 1.
 */
function shutdownSignal(logger: Logger): { received: Promise<NodeJS.Signals>; dispose: () => void } {
  let resolve: (signal: NodeJS.Signals) => void = () => {};
  const received = new Promise<NodeJS.Signals>((r) => (resolve = r));
  let deadline: NodeJS.Timeout | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (deadline) return;
    deadline = setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting', { deadlineMs: SHUTDOWN_DEADLINE_MS });
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    resolve(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    received,
    // The deadline stays armed (unref'd): a handle left open after the stop must not keep the process.
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
