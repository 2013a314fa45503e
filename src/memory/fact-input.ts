/**
 * What a trusted source (operator, import) may write as a fact key and category. Nothing is
 * folded silently: "Billing Address" is refused with the accepted form, not stored as
 * billing_address behind the operator's back.
 */
import { snakeCase } from './thread-state.ts';
import { FACT_CATEGORIES, FACT_KEY_RULE, MAX_KEY_LENGTH, type FactCategory } from './types.ts';

// Digits may lead: promoted keys come from snakeCase, which keeps them ("2fa_method").
const SNAKE_CASE = /^[a-z0-9]+(?:_[a-z0-9]+)*$/;

/** Null when `key` is accepted as it is; otherwise why not, with a suggestion when one exists. */
export function factKeyProblem(key: string): string | null {
  if (key.length <= MAX_KEY_LENGTH && SNAKE_CASE.test(key)) return null;
  const shown = JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
  const suggestion = snakeCase(key);
  const hint = suggestion && suggestion !== key && SNAKE_CASE.test(suggestion) ? ` (did you mean ${suggestion}?)` : '';
  return `key ${shown} is not ${FACT_KEY_RULE}${hint}`;
}

/** Null when `category` is one of FACT_CATEGORIES; otherwise the accepted list. */
export function factCategoryProblem(category: string): string | null {
  if (isFactCategory(category)) return null;
  return `category ${JSON.stringify(category.slice(0, 40))} is not one of ${FACT_CATEGORIES.join(', ')}`;
}

export function isFactCategory(value: string): value is FactCategory {
  return (FACT_CATEGORIES as readonly string[]).includes(value);
}
