import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createAppLogger } from '../../app/logging.ts';
import { loadConfig } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { describeModel } from '../../llm/create-provider.ts';
import { progressReporter } from '../progress.ts';
import { normaliseAddress } from '../../mail/addresses.ts';
import { memorySummary } from '../../replay/memory-summary.ts';
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
  const report = await runReplay({
    inputs,
    address,
    config,
    logger,
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    settle: options.settle ?? true,
    ...(options.kb ? { knowledge: options.kb } : {}),
    started: () => process.stderr.write(`replay: ${describeModel(config.llm)}\n`),
    progress: progressReporter({
      label: 'replay',
      unit: 'messages',
      isTerminal: process.stderr.isTTY === true,
      write: (text) => process.stderr.write(text),
    }),
  });
  const json = JSON.stringify(report, null, 2) + '\n';
  if (options.report) {
    await mkdir(path.dirname(path.resolve(options.report)), { recursive: true });
    await writeFile(options.report, json).catch((error: NodeJS.ErrnoException) => {
      throw new AppError('INPUT_INVALID', `--report ${options.report}: cannot write (${error.code ?? 'error'})`);
    });
  } else if (!process.stdout.isTTY) {
    process.stdout.write(json);
  }
  process.stderr.write(`replay: ${summaryLine(report)}${reportWhere(options.report)}\n`);
  process.stderr.write(
    memorySummary(report)
      .map((line) => `replay: ${line}\n`)
      .join(''),
  );
  if (options.dataDir) {
    process.stderr.write(
      `replay: database kept in ${path.resolve(options.dataDir)}; inspect it with DATA_DIR=${options.dataDir} ${selfCommand()} profile <customer>\n` +
        `replay: browse it in the review console: DATA_DIR=${options.dataDir} ${selfCommand()} console\n`,
    );
  }
  const unreadable = report.messages.filter((m) => m.skipReason !== null && UNREADABLE.has(m.skipReason));
  if (unreadable.length === report.messages.length) {
    throw new AppError(
      'INPUT_INVALID',
      `no mail could be read: ${unreadable.length} file(s), each skipped (${unreadable
        .slice(0, 3)
        .map((m) => `${m.file}: ${m.skipReason}`)
        .join('; ')}${unreadable.length > 3 ? '; …' : ''})`,
    );
  }
  const modelFailures = report.failures.filter((f) => f.stage === 'turn' || /\bLLM_(UNAVAILABLE|REJECTED)\b/.test(f.error));
  if (modelFailures.length > 0) {
    // The report is written and every affected turn is in it; the run itself did not do its job.
    throw new AppError(
      'LLM_UNAVAILABLE',
      `${modelFailures.length} turns or promotion passes failed (${modelFailures[0]!.error.slice(0, 200)}); see "failures" in the report`,
    );
  }
}

/** Skip reasons that mean the file was not a mail we could read (as opposed to mail that needs no reply). */
const UNREADABLE = new Set(['malformed', 'no-sender', 'too-large']);

function summaryLine(report: Awaited<ReturnType<typeof runReplay>>): string {
  const skipped = report.messages.filter((m) => m.outcome === 'skipped').length;
  return (
    `${report.messages.length} messages (${skipped} skipped), ${report.threads.length} threads, ` +
    `${report.profiles.length} profiles, ${report.drafts.length} drafts` +
    (report.failures.length > 0 ? `, ${report.failures.length} failures (see "failures" in the report)` : '')
  );
}

function reportWhere(file: string | undefined): string {
  if (file) return `; report written to ${file}`;
  return process.stdout.isTTY ? '; add --report FILE to keep the full report (JSON)' : '; report on stdout (JSON)';
}

/** How this command was invoked, for the commands it suggests: `node bin/support-agent.js` in a checkout. */
function selfCommand(): string {
  const script = process.argv[1];
  if (!script) return 'support-agent';
  const relative = path.relative(process.cwd(), script);
  return relative.startsWith('..') || path.isAbsolute(relative) || relative.includes('node_modules') ? 'support-agent' : `node ${relative}`;
}
