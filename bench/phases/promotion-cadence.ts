/**
 * Figure 7, memory over months: how many promotion calls a long thread costs per customer
 * message, and how long a stated fact takes to reach the profile. Replays the long-history fixture
 * (fixtures/emails/long-history: one thread of 84 mails over 58 days that never rests QUIET_AFTER)
 * through `runReplay` with the offline provider on the virtual clock, as `support-agent replay`
 * does, and reads the report: each thread's passes with the messages they covered, each fact's
 * `validFrom` (the stating mail's date) and `recordedAt` (the pass that recorded it).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/logger.ts';
import { runReplay } from '../../src/replay/run-replay.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, NO_TARGET, type PhaseResult } from '../report.ts';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/emails/long-history');
const HOUR = 3_600_000;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

export async function runPromotionCadence(ctx: PhaseContext): Promise<PhaseResult> {
  const config = loadConfig({});
  const promoteEveryH = config.memory.promoteEveryMs / HOUR;
  ctx.log(`replaying ${FIXTURE}`);
  const report = await runReplay({ inputs: [FIXTURE], address: 'support@acme.example', config, logger: silentLogger });
  const customerMessages = report.messages.filter((m) => m.outcome === 'processed').length;
  const passes = report.threads.flatMap((t) => t.promotions);
  const covered = passes.flatMap((p) => p.messageIds);
  const coveredOnce = new Set(covered).size === covered.length && covered.length === customerMessages;
  const facts = report.profiles.flatMap((p) => p.facts.filter((f) => f.origin === 'email' && f.validFrom));
  const lags = facts.map((f) => (new Date(f.recordedAt).getTime() - new Date(f.validFrom!).getTime()) / HOUR).sort((a, b) => a - b);
  const scenario = JSON.parse(readFileSync(path.join(FIXTURE, 'scenario.json'), 'utf8')) as {
    preferenceChange: { date: string; key: string; after: string };
  };
  const changed = facts.find((f) => f.key === scenario.preferenceChange.key && f.value === scenario.preferenceChange.after);
  const changeLag = changed
    ? (new Date(changed.recordedAt).getTime() - new Date(scenario.preferenceChange.date).getTime()) / HOUR
    : Number.NaN;
  const expiredAccepted = facts.filter((f) => f.expiresAt && new Date(f.expiresAt) <= new Date(f.recordedAt)).length;

  const notes = `${customerMessages} customer messages, ${passes.length} passes (${[...new Set(passes.map((p) => p.trigger))].join(', ')}); every message covered exactly once: ${coveredOnce}; ${facts.length} facts from email, ${expiredAccepted} recorded already expired`;
  return {
    inputs: {
      fixture: 'fixtures/emails/long-history',
      provider: 'offline',
      promoteEvery: `${promoteEveryH}h`,
      promoteEveryMessages: config.memory.promoteEveryMessages,
    },
    figures: [
      figure({
        name: '7. promotion calls per customer message, 84-mail thread over 58 days',
        value: passes.length / customerMessages,
        unit: 'calls/msg',
        baseline: 1,
        target: NO_TARGET,
        met: null,
        notes: `baseline: one call per customer message. ${notes}`,
      }),
      figure({
        name: '7. lag from statement to profile, p50 / max',
        value: percentile(lags, 50),
        unit: 'h',
        baseline: promoteEveryH,
        target: `max <= PROMOTE_EVERY (${promoteEveryH} h)`,
        met: (lags.at(-1) ?? Infinity) <= promoteEveryH,
        notes: `max ${lags.at(-1)?.toFixed(1) ?? 'n/a'} h over ${lags.length} facts; the changed preference reached the profile ${changeLag.toFixed(1)} h after the mail that changed it. Baseline: PROMOTE_EVERY.`,
      }),
    ],
  };
}
