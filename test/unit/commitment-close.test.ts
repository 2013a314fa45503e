/**
 * When a commitment may close (src/memory/commitments.ts): only on a proven source (the customer's
 * own message, or the team's reply through a channel that proves it), whose quoted evidence is in
 * that message, is about the commitment, and came after the promise.
 */
import { describe, expect, it } from 'vitest';
import { checkCommitmentClose, evidenceSupports, type CommitmentSource } from '../../src/memory/commitments.ts';

const PROMISED = new Date('2026-10-05T10:00:00Z');
const LATER = new Date('2026-10-07T10:00:00Z');
const OPEN = [
  { id: 'c_refund', text: 'Refund the duplicate charge of 49 EUR by Friday', promisedAt: PROMISED },
  { id: 'c_call', text: 'Call the customer back about the router', promisedAt: PROMISED },
];

function check(evidence: string, source: Partial<CommitmentSource> | null, commitment = 'c_refund') {
  return checkCommitmentClose(
    { commitment, evidence, sourceMessageId: '<m@x>' },
    OPEN,
    source === null ? null : { text: evidence, date: LATER, proven: true, ...source },
  );
}

describe('checkCommitmentClose', () => {
  const cases: Array<[string, string, Partial<CommitmentSource> | null, string | true, string?]> = [
    ['the customer confirms the refund', 'the refund for the duplicate charge arrived today', {}, true],
    ['a proven team reply says it was refunded', 'We have refunded the 49 EUR.', {}, true],
    ['a number alone ties it', 'The 49 came back, thanks', {}, true],
    [
      'an unproven message (a forged staff mail, a pending draft)',
      'We have refunded the duplicate charge.',
      { proven: false },
      'source-unverified',
    ],
    ['evidence not in the message', 'refunded', { text: 'Nothing here.' }, 'evidence-in-source'],
    ['no message', 'refunded', null, 'evidence-in-source'],
    ['empty evidence', '   ', {}, 'evidence-in-source'],
    ['“Thanks!” closes nothing', 'Thanks!', {}, 'evidence-unrelated'],
    ['an unrelated sentence', 'Your router firmware is current.', {}, 'evidence-unrelated'],
    ['a message from before the promise', 'The duplicate charge was refunded.', { date: PROMISED }, 'evidence-before-promise'],
    ['an unknown commitment', 'refunded', {}, 'commitment-unknown', 'c_nope'],
    ['the call commitment by a proven reply', 'I called the customer about the router today.', {}, true, 'c_call'],
    ['the commitment named by its text', 'refund arrived', {}, true, 'Refund the duplicate charge of 49 EUR by Friday'],
  ];
  it.each(cases)('%s', (_name, evidence, source, expected, commitment) => {
    const verdict = check(evidence, source, commitment);
    if (expected === true) expect(verdict).toMatchObject({ ok: true });
    else expect(verdict).toMatchObject({ ok: false, rule: expected });
  });
});

describe('evidenceSupports', () => {
  const cases: Array<[string, string, boolean]> = [
    ['Refund the shipping costs by Friday', 'the shipping refund arrived', true],
    ['Refund the shipping costs', 'refunded', true],
    ['Rückerstattung bis Freitag', 'Die Rückerstattung ist angekommen', true],
    ['Remboursement sous 3 jours', 'remboursé hier', true],
    ['Send invoice INV-2291', 'invoice inv-2291 received', true],
    ['退款到账', '退款已到账', true],
    ['返金します', '返金を確認しました', true],
    ['Refund the shipping costs', 'ok thanks', false],
    ['Refund the shipping costs', 'Great!', false],
    ['Refund the shipping costs', '', false],
    ['退款到账', '谢谢', false],
  ];
  it.each(cases)('%s ← %s', (commitment, evidence, expected) => expect(evidenceSupports(commitment, evidence)).toBe(expected));

  it('compares a bounded number of words of a very long evidence', () => {
    expect(evidenceSupports('refund', `${'word '.repeat(100_000)}refund`)).toBe(false);
  });
});
