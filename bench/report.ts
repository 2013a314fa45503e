/**
 * The shape of benchmark results and how they are shown: one figure per measured quantity, as a
 * ratio against a baseline measured in the same run (the machines are shared and noisy), against
 * a fixed ceiling where the figure has one, or alone where nothing honest compares.
 */
import os from 'node:os';

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /**
   * The same quantity for the baseline, measured in the same run (its unit is `unit` too), or a
   * ceiling the notes explain; null when there is no meaningful baseline.
   */
  baseline: number | null;
  /** value / baseline; null without a baseline. */
  ratio: number | null;
  /** What "good" means, in words; "none (reported)" when the issue sets no target. */
  target: string;
  /** null when there is no target to meet. */
  met: boolean | null;
  notes?: string;
}

export interface PhaseResult {
  figures: Figure[];
  /** Everything that shaped the figures: counts, seeds, settings, corpus hashes. */
  inputs: Record<string, unknown>;
}

export interface Results {
  machine: Record<string, unknown>;
  date: string;
  mode: 'quick' | 'full';
  durationSeconds: number;
  inputs: Record<string, unknown>;
  figures: Figure[];
  /** Phases that failed, with the error; their figures are missing, not invented. */
  failures: Array<{ phase: string; error: string }>;
}

export const NO_TARGET = 'none (reported)';

export function figure(fields: Omit<Figure, 'ratio'> & { ratio?: number }): Figure {
  const { baseline } = fields;
  if (baseline === null) return { ...fields, value: round(fields.value), baseline: null, ratio: null };
  const ratio = fields.ratio ?? (baseline === 0 ? Number.NaN : fields.value / baseline);
  return { ...fields, value: round(fields.value), baseline: round(baseline), ratio: round(ratio, 4) };
}

export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

export function megabytes(bytes: number): number {
  return bytes / (1024 * 1024);
}

/** Nearest-rank percentile of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}

export function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryBytes: os.totalmem(),
    memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((l) => round(l)),
  };
}

function cell(value: number | null): string {
  if (value === null) return '—';
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function verdict(met: boolean | null): string {
  return met === null ? '—' : met ? 'met' : 'MISSED';
}

/** A plain-text table: every figure, its baseline and ratio, the target and whether it was met. */
export function renderTable(figures: readonly Figure[]): string {
  const rows = figures.map((f) => [
    f.name,
    `${cell(f.value)} ${f.unit}`,
    f.baseline === null ? '—' : `${cell(f.baseline)} ${f.unit}`,
    cell(f.ratio),
    f.target,
    verdict(f.met),
  ]);
  const header = ['figure', 'value', 'baseline', 'ratio', 'target', 'met'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
