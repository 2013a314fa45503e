import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createAppLogger } from '../../app/logging.ts';
import { loadConfig } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { normaliseAddress } from '../../mail/addresses.ts';
import { runReplay } from '../../replay/run-replay.ts';

export interface ReplayCommandOptions {
  report?: string;
  address?: string;
  dataDir?: string;
  /** Knowledge-base folders or files to import first. */
  kb?: string[];
  /** Commander's `--no-settle`: false when given. */
  settle?: boolean;
}

export async function runReplayCommand(inputs: string[], options: ReplayCommandOptions): Promise<void> {
  const config = loadConfig();
  const address = options.address === undefined ? config.supportAddress : normaliseAddress(options.address);
  if (!address) throw new AppError('USAGE', `--address: "${options.address}" is not an email address`);
  // A replay is a batch job: progress goes to stderr, so routine info logs would only drown it.
  const logger = createAppLogger(config.logLevel === 'info' ? { ...config, logLevel: 'warn' } : config, 'replay');
  let lastShown = 0;
  const report = await runReplay({
    inputs,
    address,
    config,
    logger,
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    settle: options.settle ?? true,
    ...(options.kb ? { knowledge: options.kb } : {}),
    progress: (done, total) => {
      const now = Date.now();
      if (done === total || now - lastShown > 2000) {
        lastShown = now;
        process.stderr.write(`replay: ${done}/${total} messages\n`);
      }
    },
  });
  const json = JSON.stringify(report, null, 2) + '\n';
  if (options.report) {
    await mkdir(path.dirname(path.resolve(options.report)), { recursive: true });
    await writeFile(options.report, json).catch((error: NodeJS.ErrnoException) => {
      throw new AppError('INPUT_INVALID', `--report ${options.report}: cannot write (${error.code ?? 'error'})`);
    });
    const skipped = report.messages.filter((m) => m.outcome === 'skipped').length;
    process.stderr.write(
      `replay: ${report.messages.length} messages (${skipped} skipped), ${report.threads.length} threads, ` +
        `${report.profiles.length} profiles, ${report.drafts.length} drafts` +
        `${report.failures.length > 0 ? `, ${report.failures.length} failures (see "failures" in the report)` : ''}; report written to ${options.report}\n`,
    );
  } else {
    process.stdout.write(json);
  }
  if (options.dataDir) {
    process.stderr.write(
      `replay: database kept in ${path.resolve(options.dataDir)}; inspect it with DATA_DIR=${options.dataDir} support-agent profile <customer>\n`,
    );
  }
}
