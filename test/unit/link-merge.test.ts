import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planLinkMerge, type MergeFact } from '../../src/memory/link-merge.ts';
import { policySchema } from '../../src/memory/promotion-policy.ts';

const policy = policySchema.parse(
  JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../config/promotion-policy.json'), 'utf8')),
);
const day = (n: number) => new Date(Date.UTC(2026, 10, n));
let seq = 0;
const fact = (key: string, value: string, origin: string, validFrom: Date, category: MergeFact['category'] = 'identity'): MergeFact => ({
  id: `f${++seq}`,
  key,
  value,
  category,
  origin,
  validFrom,
});

describe('merging two profiles on link', () => {
  it('keeps the operator value of a single-valued key even when the email value is newer', () => {
    const operator = fact('account_tier', 'Business', 'operator', day(1), 'account');
    const email = fact('account_tier', 'Starter', 'email', day(9), 'account');
    expect(planLinkMerge(policy, [email, operator])).toEqual([
      expect.objectContaining({ factId: email.id, keptFactId: operator.id, key: 'account_tier', value: 'Starter' }),
    ]);
  });

  it('keeps the newest statement between two email values, whichever profile it came from', () => {
    const older = fact('phone', '+44 20 7946 0018', 'email', day(2));
    const newer = fact('phone', '+44 20 7946 0999', 'email', day(3));
    expect(planLinkMerge(policy, [newer, older]).map((r) => [r.factId, r.keptFactId])).toEqual([[older.id, newer.id]]);
    expect(planLinkMerge(policy, [older, newer]).map((r) => [r.factId, r.keptFactId])).toEqual([[older.id, newer.id]]);
  });

  it("puts an operator's value before an import's, and an import's before a newer email value", () => {
    const imported = fact('company', 'Initech', 'import', day(5));
    const operator = fact('company', 'Globex', 'operator', day(4));
    const email = fact('company', 'Umbrella', 'email', day(8));
    const plan = planLinkMerge(policy, [imported, email, operator]);
    expect(plan.map((r) => r.factId).sort()).toEqual([imported.id, email.id].sort());
    expect(new Set(plan.map((r) => r.keptFactId))).toEqual(new Set([operator.id]));
    expect(plan[0]!.reason).toMatch(/operator's value wins/);
    const withoutOperator = planLinkMerge(policy, [email, imported]);
    expect(withoutOperator.map((r) => [r.factId, r.keptFactId])).toEqual([[email.id, imported.id]]);
    expect(withoutOperator[0]!.reason).toMatch(/imported value wins/);
  });

  it('between two operator values keeps the newer', () => {
    const first = fact('account_tier', 'Starter', 'operator', day(1), 'account');
    const second = fact('account_tier', 'Business', 'operator', day(2), 'account');
    expect(planLinkMerge(policy, [second, first]).map((r) => [r.factId, r.keptFactId])).toEqual([[first.id, second.id]]);
  });

  it('keeps every distinct value of a multi-valued key and drops only repeats (compared folded)', () => {
    const a = fact('order_number', 'A-100', 'email', day(1), 'account');
    const b = fact('order_number', 'A-200', 'email', day(2), 'account');
    const again = fact('order_number', 'a-100', 'email', day(3), 'account');
    expect(planLinkMerge(policy, [a, b, again]).map((r) => [r.factId, r.keptFactId])).toEqual([[a.id, again.id]]);
  });

  it('leaves profiles without conflicts alone', () => {
    expect(planLinkMerge(policy, [fact('name', 'Alice', 'email', day(1)), fact('company', 'Globex', 'email', day(1))])).toEqual([]);
    expect(planLinkMerge(policy, [])).toEqual([]);
  });
});
