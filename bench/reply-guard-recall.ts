/**
 * `npx tsx bench/reply-guard-recall.ts`: the outbound reply guard's recall on the promise table
 * (test/support/promise-phrasings.ts: promises of refunds, credits, voided or waived charges,
 * plan changes, unlocks, lifted holds, balance changes, deadlines and delivery dates, in 11
 * languages) and its false-positive rate on replies that share their words but promise nothing.
 * Prints the figures, then every miss and every false alarm. No services, no timing.
 */
import { HELD_OUT_HARMLESS, HELD_OUT_PROMISES, measureGuard } from '../test/support/promise-phrasings.ts';

for (const [name, figures] of [
  ['table', measureGuard()],
  ['held-out', measureGuard(HELD_OUT_PROMISES, HELD_OUT_HARMLESS)],
] as const) {
  const percent = (n: number) => `${(n * 100).toFixed(1)}%`;
  console.log(`${name}: recall ${figures.held}/${figures.promises} promises held (${percent(figures.recall)})`);
  console.log(
    `${name}: false positives ${figures.falsePositives}/${figures.harmless} harmless replies held (${percent(figures.falsePositiveRate)})`,
  );
  for (const miss of figures.missed) console.log(`  missed: ${miss}`);
  for (const alarm of figures.flagged) console.log(`  false alarm: ${alarm}`);
}
