/**
 * Issue 27, finding 6: the reply guard holds reworded promises. The table
 * (test/support/promise-phrasings.ts) has ≥ 80 promises of refunds, credits, voided or waived
 * charges, plan changes, unlocks, lifted holds, balance changes, deadlines and delivery dates in
 * 11 languages, and ≥ 40 harmless replies that share their words; its figures are floors here and
 * printed by `npx tsx bench/reply-guard-recall.ts`. The held-out table was written after the
 * vocabulary and never tuned against: its floors are lower, and honest.
 */
import { describe, expect, it } from 'vitest';
import { reviewReply } from '../../src/memory/reply-guard.ts';
import {
  HARMLESS,
  HELD_OUT_HARMLESS,
  HELD_OUT_PROMISES,
  measureGuard,
  PROMISES,
  RECALL_CONTEXT,
  RECALL_NOW,
} from '../support/promise-phrasings.ts';

const review = (body: string) => reviewReply({ body, context: RECALL_CONTEXT, now: RECALL_NOW });

describe('the promise table', () => {
  it('is big enough and covers every family in several languages', () => {
    expect(PROMISES.length).toBeGreaterThanOrEqual(80);
    expect(HARMLESS.length).toBeGreaterThanOrEqual(40);
    const families = new Set(PROMISES.map(([family]) => family));
    expect([...families].sort()).toEqual(
      ['balance', 'credit', 'deadline', 'delivery', 'lifted-hold', 'plan-change', 'refund', 'unlock', 'void-or-waive'].sort(),
    );
    expect(new Set(PROMISES.map(([, language]) => language)).size).toBeGreaterThanOrEqual(10);
  });

  it('recall ≥ 0.95 and false-positive rate ≤ 0.05 on the table', () => {
    const figures = measureGuard();
    expect(figures.missed).toEqual([]); // listed so a failure names the phrasing
    expect(figures.recall).toBeGreaterThanOrEqual(0.95);
    expect(figures.falsePositiveRate).toBeLessThanOrEqual(0.05);
  });

  it('recall ≥ 0.6 and no false positive on the held-out table', () => {
    const figures = measureGuard(HELD_OUT_PROMISES, HELD_OUT_HARMLESS);
    expect(figures.recall).toBeGreaterThanOrEqual(0.6);
    expect(figures.falsePositiveRate).toBe(0);
  });
});

describe("the finding's own rewordings are held", () => {
  it.each([
    "I've voided the charge on your card",
    "I've zeroed your balance",
    "I've lifted the security hold on your account",
    'The late fee has been wiped from your invoice',
    "I've put store credit on your account",
    "I've knocked the price of your renewal down by half",
  ])('%s', (body) => {
    expect(review(body).needsHuman).toBe(true);
  });
});

describe('a structural reading catches verbs no list names', () => {
  it.each([
    ["I've struck the penalty from your statement.", 'promise-change'],
    ['We have settled the outstanding amount for you.', 'promise-change'],
    ['Your lockout is now cleared.', 'promise-change'],
    ['Die Rückzahlung ist veranlasst.', 'promise-change'],
    ['Le trop-perçu vous a été restitué.', 'promise-change'],
    ['Le reintegramos el importe.', 'promise-change'],
  ])('%s → %s', (body, rule) => {
    expect(review(body).findings.map((f) => f.rule)).toContain(rule);
  });

  it.each([
    'We have received your refund request.',
    "We haven't changed anything on your account.",
    'I have forwarded your question about the fee to billing.',
    'We are looking into the charge.',
    'Your balance is shown on the billing page.',
    'Wir haben Ihre Anfrage zur Gebühr erhalten.',
    "J'ai transmis votre question sur les frais.",
    'Hemos recibido su consulta sobre el cargo.',
    'The fee was charged twice, as you wrote.',
    "I've added a note to your account so the team sees it.",
    'Your account is active.',
    "I've attached the invoice you asked for.",
    'We have sent the invoice again to your email address.',
    'We have recorded the charge in your ticket.',
    'We updated the help article about invoices.',
    'I have escalated your refund request to billing.',
  ])('passes: %s', (body) => {
    expect(review(body).needsHuman).toBe(false);
  });
});
