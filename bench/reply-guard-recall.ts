/**
 * `npx tsx bench/reply-guard-recall.ts`: the outbound reply guard's recall on the promise table
 * (test/support/promise-phrasings.ts: promises of refunds, credits, voided or waived charges,
 * plan changes, unlocks, lifted holds, balance changes, deadlines and delivery dates, in 11
 * languages) and its false-positive rate on replies that share their words but promise nothing.
 * Prints the figures, then every miss and every false alarm. No services, no timing.
 */
import { measureGuard } from '../test/support/promise-phrasings.ts';

const figures = measureGuard();
console.log(`reply guard recall: ${figures.held}/${figures.promises} promises held (${(figures.recall * 100).toFixed(1)}%)`);
console.log(
  `reply guard false positives: ${figures.falsePositives}/${figures.harmless} harmless replies held (${(figures.falsePositiveRate * 100).toFixed(1)}%)`,
);
for (const miss of figures.missed) console.log(`  missed: ${miss}`);
for (const alarm of figures.flagged) console.log(`  false alarm: ${alarm}`);
