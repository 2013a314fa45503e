/**
 * `support-agent eval <mbox | Maildir | folder> --report out.json [--address …] [--compare other.json]`:
 * runs the evaluation (src/replay/run-eval.ts), writes its report, prints the summary table and,
 * with --compare, the differences from an earlier report.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { createAppLogger } from '../../app/logging.ts';
import { loadConfig } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { normaliseAddress } from '../../mail/addresses.ts';
import type { EvalSummary } from '../../replay/eval-score.ts';
import { runEval, type EvalReport } from '../../replay/run-eval.ts';

export interface EvalCommandOptions {
  report?: string;
  address?: string;
  compare?: string;
  sent?: string;
}

const summarySchema = z.object({
  pairs: z.number(),
  meanSimilarity: z.number().nullable(),
  medianSimilarity: z.number().nullable(),
  groundedRate: z.number().nullable(),
  factsUsedRate: z.number().nullable(),
  needsHumanAgreement: z.number().nullable(),
  meanPromptTokens: z.number().nullable(),
  meanCompletionTokens: z.number().nullable(),
  modelCallsPerTurn: z.number().nullable(),
});
const comparedSchema = z.object({ provider: z.string(), model: z.string(), summary: summarySchema });

const ROWS: Array<[keyof EvalSummary, string]> = [
  ['pairs', 'pairs (answered mails drafted)'],
  ['meanSimilarity', 'similarity to the team reply, mean'],
  ['medianSimilarity', 'similarity to the team reply, median'],
  ['groundedRate', 'drafts fully grounded'],
  ['factsUsedRate', 'profile facts used'],
  ['needsHumanAgreement', 'needs-human agreement'],
  ['meanPromptTokens', 'prompt tokens per turn'],
  ['meanCompletionTokens', 'completion tokens per turn'],
  ['modelCallsPerTurn', 'model calls per turn'],
];

const show = (value: number | null) => (value === null ? '-' : Number.isInteger(value) ? String(value) : value.toFixed(3));

/** The summary table, with a second column and the difference when an earlier report is given. */
export function formatEvalTable(
  report: Pick<EvalReport, 'provider' | 'model' | 'summary'>,
  other?: z.infer<typeof comparedSchema>,
): string {
  const header = [
    '',
    `${report.provider}/${report.model}`,
    ...(other ? [`${other.provider}/${other.model} (compared)`, 'difference'] : []),
  ];
  const rows = ROWS.map(([key, label]) => {
    const value = report.summary[key];
    const before = other ? other.summary[key] : null;
    const diff = value !== null && before !== null ? value - before : null;
    return [
      label,
      show(value),
      ...(other ? [show(before), diff === null ? '-' : `${diff >= 0 ? '+' : ''}${show(Math.round(diff * 1000) / 1000)}`] : []),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

export async function runEvalCommand(input: string, options: EvalCommandOptions): Promise<void> {
  const config = loadConfig();
  const address = options.address === undefined ? config.supportAddress : normaliseAddress(options.address);
  if (!address) throw new AppError('USAGE', `--address: "${options.address}" is not an email address`);
  const other = options.compare ? await readCompared(options.compare) : undefined;
  const logger = createAppLogger(config.logLevel === 'info' ? { ...config, logLevel: 'warn' } : config, 'eval');
  let lastShown = 0;
  const report = await runEval({
    input,
    sent: options.sent,
    address,
    config,
    logger,
    progress: (done, total) => {
      const now = Date.now();
      if (done === total || now - lastShown > 2000) {
        lastShown = now;
        process.stderr.write(`eval: ${done}/${total} messages\n`);
      }
    },
  });
  if (options.report) {
    await mkdir(path.dirname(path.resolve(options.report)), { recursive: true });
    await writeFile(options.report, JSON.stringify(report, null, 2) + '\n').catch((error: NodeJS.ErrnoException) => {
      throw new AppError('INPUT_INVALID', `--report ${options.report}: cannot write (${error.code ?? 'error'})`);
    });
  }
  process.stdout.write(
    `${report.messages} messages, ${report.customerMails} from customers, ${report.answered} answered by the team, ` +
      `${report.pairs.length} paired with a draft${report.failures.length > 0 ? `, ${report.failures.length} failures` : ''}\n` +
      (report.unprovenTeamMails > 0
        ? `${report.unprovenTeamMails} from a team address without proof, not counted as the team's (give the Sent folder with --sent)\n`
        : '') +
      '\n' +
      `${formatEvalTable(report, other)}\n`,
  );
}

async function readCompared(file: string): Promise<z.infer<typeof comparedSchema>> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new AppError('INPUT_INVALID', `--compare ${file}: cannot read (${error.code ?? 'error'})`);
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError('INPUT_INVALID', `--compare ${file}: not JSON`);
  }
  const parsed = comparedSchema.safeParse(json);
  if (!parsed.success) throw new AppError('INPUT_INVALID', `--compare ${file}: not an eval report`);
  return parsed.data;
}
