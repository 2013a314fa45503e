/**
 * The regression guard's comparison (issue 25): each figure named in bench/floors.json, as its
 * ratio in a benchmark run's results, against the committed floor (`min`) or ceiling (`max`).
 * Ratios only: absolute times say nothing on a shared machine. Pure; bench/check.ts runs it.
 */
import { z } from 'zod';
import type { Figure } from './report.ts';

const floorSchema = z
  .object({
    figure: z.string().min(1),
    /** The benchmark phase that produces the figure (run again once when the figure misses its bound). */
    phase: z.string().min(1),
    min: z.number().positive().optional(),
    max: z.number().positive().optional(),
    /** False: measured and printed, never failing the check (a floor waiting for a fix to land). */
    enforced: z.boolean().default(true),
    why: z.string().default(''),
  })
  .refine((f) => (f.min === undefined) !== (f.max === undefined), { message: 'a floor has exactly one of min and max' });

export const floorsFileSchema = z.object({
  phases: z.array(z.string().min(1)).min(1),
  floors: z.array(floorSchema).min(1),
});
export type FloorsFile = z.infer<typeof floorsFileSchema>;

export interface FloorVerdict {
  figure: string;
  bound: string;
  ratio: number | null;
  verdict: 'ok' | 'below-floor' | 'above-ceiling' | 'missing' | 'not-enforced';
  enforced: boolean;
}

/** Every floor against the run's figures; a figure missing from the run fails its enforced floor. */
export function checkFloors(floors: FloorsFile, figures: ReadonlyArray<Pick<Figure, 'name' | 'ratio'>>): FloorVerdict[] {
  return floors.floors.map((floor) => {
    const bound = floor.min !== undefined ? `>= ${floor.min}` : `<= ${floor.max}`;
    const found = figures.find((f) => f.name === floor.figure);
    const ratio = found?.ratio ?? null;
    const base = { figure: floor.figure, bound, ratio, enforced: floor.enforced };
    if (ratio === null || !Number.isFinite(ratio)) return { ...base, verdict: floor.enforced ? 'missing' : 'not-enforced' };
    const low = floor.min !== undefined && ratio < floor.min;
    const high = floor.max !== undefined && ratio > floor.max;
    if (!low && !high) return { ...base, verdict: 'ok' };
    if (!floor.enforced) return { ...base, verdict: 'not-enforced' };
    return { ...base, verdict: low ? 'below-floor' : 'above-ceiling' };
  });
}

/** The phases whose enforced figures failed: run once more before the verdict. */
export function phasesToRetry(floors: FloorsFile, verdicts: readonly FloorVerdict[]): string[] {
  const failed = new Set(verdicts.filter((v) => v.verdict !== 'ok' && v.verdict !== 'not-enforced').map((v) => v.figure));
  return [...new Set(floors.floors.filter((f) => failed.has(f.figure)).map((f) => f.phase))];
}

/** Two runs' figures as one: per floor the better ratio (higher for a floor, lower for a ceiling); other figures from the first. */
export function bestOf(
  floors: FloorsFile,
  first: ReadonlyArray<Pick<Figure, 'name' | 'ratio'>>,
  second: ReadonlyArray<Pick<Figure, 'name' | 'ratio'>>,
): Array<Pick<Figure, 'name' | 'ratio'>> {
  return floors.floors.map((floor) => {
    const ratios = [first, second]
      .map((run) => run.find((f) => f.name === floor.figure)?.ratio)
      .filter((r): r is number => typeof r === 'number' && Number.isFinite(r));
    if (ratios.length === 0) return { name: floor.figure, ratio: null };
    return { name: floor.figure, ratio: floor.min !== undefined ? Math.max(...ratios) : Math.min(...ratios) };
  });
}

/** The check's lines: one per floor, then the failures named. */
export function describeVerdicts(verdicts: readonly FloorVerdict[]): { lines: string[]; failed: FloorVerdict[] } {
  const failed = verdicts.filter((v) => v.verdict === 'below-floor' || v.verdict === 'above-ceiling' || v.verdict === 'missing');
  const lines = verdicts.map((v) => {
    const ratio = v.ratio === null ? 'missing' : String(v.ratio);
    const label = {
      ok: 'ok',
      'below-floor': 'BELOW ITS FLOOR',
      'above-ceiling': 'ABOVE ITS CEILING',
      missing: 'MISSING (its phase failed?)',
      'not-enforced': 'outside its bound (not enforced)',
    }[v.verdict];
    return `${v.figure}: ratio ${ratio}, bound ${v.bound}: ${label}`;
  });
  for (const f of failed)
    lines.push(`bench:check failed: "${f.figure}" ${f.verdict === 'missing' ? 'is missing' : `is ${f.ratio}, bound ${f.bound}`}`);
  return { lines, failed };
}
