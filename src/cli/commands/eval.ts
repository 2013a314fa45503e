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
import { describeModel } from '../../llm/create-provider.ts';
import { progressReporter } from '../progress.ts';
import { normaliseAddress } from '../../mail/addresses.ts';
import type { EvalSummary } from '../../replay/eval-score.ts';
import { runEval, type EvalReport } from '../../replay/run-eval.ts';
import { formatPairsText, renderPairsHtml } from './eval-pairs-view.ts';

export interface EvalCommandOptions {
  report?: string;
  address?: string;
  compare?: string;
  /** The team's Sent folder export: what proves the team's replies. */
  sent?: string;
  /** Knowledge-base folders or files imported before the history (repeatable). */
  kb?: string[];
  /** Print every scored pair (draft beside the team's reply). */
  pairs?: boolean;
  /** Write every scored pair to this HTML file. */
  html?: string;
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
  ['pairs', 'pairs scored'],
  ['meanSimilarity', 'similarity to the team reply, mean'],
  ['medianSimilarity', 'similarity to the team reply, median'],
  ['groundedRate', 'share of drafts with no invented number'],
  ['factsUsedRate', 'share of profile facts used'],
  ['needsHumanAgreement', 'needs-a-person agreement'],
  ['meanPromptTokens', 'prompt tokens per turn'],
  ['meanCompletionTokens', 'completion tokens per turn'],
  ['modelCallsPerTurn', 'model calls per turn'],
];

/** What each row means, printed under the table (and in the HTML view). */
export const EVAL_LEGEND: ReadonlyArray<readonly [string, string]> = [
  ['pairs scored', 'customer mails the team answered and the agent drafted for (failed turns are never scored)'],
  ['similarity', '0-1: word overlap of the draft with the team’s real reply (1 = the same words)'],
  ['no invented number', 'every number and identifier in the draft (order numbers, amounts, dates) appears in its prompt'],
  ['profile facts used', 'of the facts the customer’s profile held at the time, the share whose value the draft uses'],
  ['needs-a-person agreement', 'share of mails labelled X-Needs-Human where the agent’s flag matches the label'],
  ['tokens, calls', 'means per reply turn, as the model reported them'],
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
  const report = await runEval({
    input,
    sent: options.sent,
    address,
    config,
    logger,
    ...(options.kb ? { knowledge: options.kb } : {}),
    started: () => process.stderr.write(`eval: ${describeModel(config.llm)}\n`),
    progress: progressReporter({
      label: 'eval',
      unit: 'messages',
      isTerminal: process.stderr.isTTY === true,
      write: (text) => process.stderr.write(text),
    }),
  });
  if (options.report) await writeOutput(options.report, '--report', JSON.stringify(report, null, 2) + '\n');
  if (options.html) await writeOutput(options.html, '--html', renderPairsHtml(report, EVAL_LEGEND));
  if (options.pairs) process.stdout.write(`${formatPairsText(report)}\n`);
  process.stdout.write(
    `${report.messages} messages, ${report.customerMails} from customers, ${report.answered} answered by the team, ` +
      `${report.pairs.length} paired with a draft${report.failures.length > 0 ? `, ${report.failures.length} failures` : ''}\n` +
      (report.unprovenTeamMails > 0
        ? `${report.unprovenTeamMails} from a team address without proof, not counted as the team's (give the Sent folder with --sent)\n`
        : '') +
      '\n' +
      `${formatEvalTable(report, other)}\n\n${EVAL_LEGEND.map(([name, meaning]) => `${name}: ${meaning}`).join('\n')}\n`,
  );
  if (report.modelFailures.length > 0) {
    const first = report.modelFailures[0]!.reason.replace(/^turn \S+: /, '');
    throw new AppError(
      'LLM_UNAVAILABLE',
      `${report.modelFailures.length} of ${report.answered} answered mails got no draft from the model (${first}); ` +
        'they are listed under "modelFailures" and left out of every score',
    );
  }
}

async function writeOutput(file: string, flag: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await writeFile(file, text).catch((error: NodeJS.ErrnoException) => {
    throw new AppError('INPUT_INVALID', `${flag} ${file}: cannot write (${error.code ?? 'error'})`);
  });
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
