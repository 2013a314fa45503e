import { describe, expect, it } from 'vitest';
import { factCategoryProblem, factKeyProblem } from '../../src/memory/fact-input.ts';

describe('trusted fact keys and categories', () => {
  it.each(['account_tier', 'plan', 'preferred_contact_time', '2fa_method', 'vat_id_2'])('accepts %j as it is', (key) => {
    expect(factKeyProblem(key)).toBeNull();
  });

  it.each([
    ['Billing Address', /key "Billing Address" is not snake_case: .* \(did you mean billing_address\?\)$/],
    ['accountTier', /not snake_case.*did you mean accounttier\?/],
    ['account__tier', /not snake_case.*did you mean account_tier\?/],
    ['_tier', /not snake_case.*did you mean tier\?/],
    ['tier_', /not snake_case/],
    ['', /key "" is not snake_case[^?]*$/],
    ['!!', /key "!!" is not snake_case[^?]*$/],
    ['a'.repeat(61), /at most 60 characters/],
  ])('refuses %j and says what is accepted', (key, message) => {
    const problem = factKeyProblem(key);
    expect(problem).toMatch(message);
    expect(problem).not.toContain('\n');
  });

  it('names every accepted category when refusing one', () => {
    expect(factCategoryProblem('account')).toBeNull();
    expect(factCategoryProblem('bogus')).toBe('category "bogus" is not one of identity, preference, account, situation, sentiment, other');
    expect(factCategoryProblem('Account')).not.toBeNull();
  });
});
