import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bestOf, checkFloors, describeVerdicts, floorsFileSchema, phasesToRetry, type FloorsFile } from '../../bench/floors.ts';

const floors: FloorsFile = floorsFileSchema.parse({
  phases: ['ingestion-postgresql', 'context-size', 'worker-throughput'],
  floors: [
    { figure: 'ingestion', phase: 'ingestion-postgresql', min: 0.15, enforced: false },
    { figure: 'context at 200', phase: 'context-size', max: 0.05 },
    { figure: 'flat', phase: 'context-size', max: 1.1 },
    { figure: 'worker', phase: 'worker-throughput', min: 0.85 },
  ],
});
const run = (ratios: Record<string, number | null>) => Object.entries(ratios).map(([name, ratio]) => ({ name, ratio }));

describe('bench:check floors', () => {
  it.each([
    ['all within', { ingestion: 0.3, 'context at 200': 0.04, flat: 1.02, worker: 0.93 }, []],
    ['exactly on the bounds', { ingestion: 0.15, 'context at 200': 0.05, flat: 1.1, worker: 0.85 }, []],
    ['the worker below its floor', { ingestion: 0.3, 'context at 200': 0.04, flat: 1.0, worker: 0.84 }, ['worker']],
    ['the context above its ceiling', { ingestion: 0.3, 'context at 200': 0.066, flat: 1.0, worker: 0.9 }, ['context at 200']],
    ['the context no longer flat', { ingestion: 0.3, 'context at 200': 0.04, flat: 1.13, worker: 0.9 }, ['flat']],
    ['ingestion twentyfold down, not enforced yet', { ingestion: 0.011, 'context at 200': 0.04, flat: 1.0, worker: 0.9 }, []],
    ['two at once', { ingestion: 0.3, 'context at 200': 0.07, flat: 1.0, worker: 0.5 }, ['context at 200', 'worker']],
    ['a figure missing (its phase failed)', { ingestion: 0.3, 'context at 200': 0.04, flat: 1.0 }, ['worker']],
    ['a ratio without a baseline', { ingestion: 0.3, 'context at 200': 0.04, flat: 1.0, worker: null }, ['worker']],
  ])('%s', (_name, ratios, failing) => {
    const { failed, lines } = describeVerdicts(checkFloors(floors, run(ratios)));
    expect(failed.map((f) => f.figure)).toEqual(failing);
    for (const figure of failing) expect(lines.join('\n')).toContain(`bench:check failed: "${figure}"`);
  });

  it('says an unenforced floor was missed without failing', () => {
    const verdicts = checkFloors(floors, run({ ingestion: 0.011, 'context at 200': 0.04, flat: 1.0, worker: 0.9 }));
    expect(verdicts[0]).toMatchObject({ verdict: 'not-enforced', ratio: 0.011 });
    expect(describeVerdicts(verdicts).lines[0]).toContain('outside its bound (not enforced)');
  });

  it('enforces the same floor once it is switched on', () => {
    const on = floorsFileSchema.parse({ ...floors, floors: floors.floors.map((f) => ({ ...f, enforced: true })) });
    expect(describeVerdicts(checkFloors(on, run({ ingestion: 0.011, 'context at 200': 0.04, flat: 1, worker: 0.9 }))).failed).toHaveLength(
      1,
    );
  });

  it.each([
    ['nothing outside', { ingestion: 0.3, 'context at 200': 0.04, flat: 1, worker: 0.9 }, []],
    ['the worker', { ingestion: 0.3, 'context at 200': 0.04, flat: 1, worker: 0.5 }, ['worker-throughput']],
    ['both context figures: their phase once', { ingestion: 0.3, 'context at 200': 0.07, flat: 1.2, worker: 0.9 }, ['context-size']],
    ['an unenforced floor: no retry', { ingestion: 0.01, 'context at 200': 0.04, flat: 1, worker: 0.9 }, []],
    ['a missing figure', { ingestion: 0.3, flat: 1, worker: 0.9 }, ['context-size']],
  ])('runs again the phases whose enforced figures missed: %s', (_name, ratios, phases) => {
    expect(phasesToRetry(floors, checkFloors(floors, run(ratios)))).toEqual(phases);
  });

  it('takes the better of two runs per figure: the higher ratio for a floor, the lower for a ceiling', () => {
    const first = run({ ingestion: 0.2, 'context at 200': 0.06, flat: 1.0, worker: 0.6 });
    const second = run({ ingestion: 0.1, 'context at 200': 0.045, flat: 1.2, worker: 0.9 });
    expect(bestOf(floors, first, second)).toEqual(run({ ingestion: 0.2, 'context at 200': 0.045, flat: 1.0, worker: 0.9 }));
    expect(bestOf(floors, first, [])).toEqual(first);
    expect(bestOf(floors, run({ worker: null }), run({ worker: null })).find((f) => f.name === 'worker')).toEqual({
      name: 'worker',
      ratio: null,
    });
  });

  it.each([
    ['both bounds', { figure: 'x', phase: 'p', min: 0.1, max: 0.2 }],
    ['no bound', { figure: 'x', phase: 'p' }],
    ['a negative floor', { figure: 'x', phase: 'p', min: -1 }],
    ['no name', { figure: '', phase: 'p', min: 0.1 }],
    ['no phase', { figure: 'x', min: 0.1 }],
  ])('refuses a floor with %s', (_name, floor) => {
    expect(() => floorsFileSchema.parse({ phases: ['context-size'], floors: [floor] })).toThrow();
  });

  it('reads the committed bench/floors.json: ratios only, context ≤ 5 %, flat ≤ 1.10, worker ≥ 0.50, ingestion ≥ 0.10 enforced', () => {
    const committed = floorsFileSchema.parse(JSON.parse(readFileSync(new URL('../../bench/floors.json', import.meta.url), 'utf8')));
    const bound = (name: string) => committed.floors.find((f) => f.figure === name);
    expect(bound('2. context tokens at 200 messages')).toMatchObject({ max: 0.05, enforced: true });
    expect(bound('2. context without the new email, largest vs 10 messages')).toMatchObject({ max: 1.1, enforced: true });
    expect(bound('3. worker throughput, concurrency 16')).toMatchObject({ min: 0.5, enforced: true });
    expect(bound('1. ingestion rate, PostgreSQL')).toMatchObject({ min: 0.1, enforced: true });
  });
});
