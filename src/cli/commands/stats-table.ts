/** The text table `support-agent stats` prints. */
import type { OutcomeCounts, QualityStats } from '../../store/quality-stats.ts';

const pct = (value: number | null) => (value === null ? '-' : `${(value * 100).toFixed(1)}%`);
const num = (value: number | null) => (value === null ? '-' : value.toFixed(3));

function duration(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${(seconds / 3600).toFixed(1)}h`;
}

const COLUMNS = ['drafts', 'as-is', 'edited', 'replaced', 'discarded', 'superseded', 'pending', 'as-is rate', 'edit sim', 'needs human'];

function row(label: string, c: OutcomeCounts): string[] {
  const o = c.byOutcome;
  return [
    label,
    String(c.drafts),
    String(o['sent-as-is']),
    String(o['sent-edited']),
    String(o.replaced),
    String(o.discarded),
    String(o.superseded),
    String(o.pending),
    pct(c.approvalAsIsRate),
    num(c.meanEditedSimilarity),
    pct(c.needsHumanRate),
  ];
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}

const minute = (date: Date) => date.toISOString().slice(0, 16).replace('T', ' ');

export function formatQualityStats(stats: QualityStats): string {
  return [
    `Drafts answering mail dated ${minute(stats.since)}${stats.until ? ` to ${minute(stats.until)}` : ' or later'} UTC`,
    '',
    ...table(
      ['', ...COLUMNS],
      [row('all', stats), ...stats.perIntent.map((i) => row(`intent ${i.intent}`, i)), ...stats.perTag.map((t) => row(`tag ${t.tag}`, t))],
    ),
    '',
    `median customer mail -> draft: ${duration(stats.medianSecondsToDraft)}`,
    `threads resolved or closed:    ${stats.threadsResolved}`,
    '',
    'promotion decisions:',
    ...(stats.promotionDecisions.length === 0
      ? ['  (none)']
      : stats.promotionDecisions.map((d) => `  ${d.verdict.padEnd(8)} ${String(d.count).padStart(5)}  ${d.rule}`)),
  ].join('\n');
}
