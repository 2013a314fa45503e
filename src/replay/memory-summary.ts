/**
 * What memory did in a replay, in two lines for the person watching it (the demo's last lines):
 * facts promoted from mail and how many profiles hold one, facts a newer value superseded, and
 * the team's promises with where they stand. Computed from the report's profiles alone.
 */
import type { ReplaySections } from '../store/replay-sections.ts';

export function memorySummary(report: Pick<ReplaySections, 'profiles'>): string[] {
  const decisions = report.profiles.flatMap((p) => p.decisions);
  const promoted = decisions.filter((d) => d.origin === 'promotion' && d.verdict === 'accepted' && d.rule !== 'refresh').length;
  const rejected = decisions.filter((d) => d.origin === 'promotion' && d.verdict === 'rejected').length;
  const superseded = decisions.filter((d) => d.verdict === 'accepted' && d.rule === 'supersede').length;
  const holding = report.profiles.filter((p) => p.facts.some((f) => f.status === 'active')).length;
  const commitments = report.profiles.flatMap((p) => p.commitments);
  const count = (...statuses: string[]): number => commitments.filter((c) => statuses.includes(c.status)).length;
  return [
    `memory: ${promoted} facts promoted from mail (${rejected} candidates refused by the policy), ${superseded} superseded by a newer value; ` +
      `${holding} of ${report.profiles.length} profiles hold a fact`,
    `memory: ${commitments.length} commitments found in the team's replies: ${count('open', 'overdue')} open ` +
      `(${count('overdue')} overdue), ${count('fulfilled')} kept, ${count('cancelled')} cancelled`,
  ];
}
