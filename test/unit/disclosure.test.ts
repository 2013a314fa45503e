import { describe, expect, it } from 'vitest';
import { isCustomerAddress, trustedAsFactSource, withheldReason, type CustomerIdentity } from '../../src/memory/disclosure.ts';

const alice: CustomerIdentity = {
  addresses: new Set(['alice@alicecorp.example', 'alice.home@mail.example']),
  domain: null,
  foldPlus: false,
};
const acme: CustomerIdentity = { addresses: new Set(['buyer@acme-corp.example']), domain: 'acme-corp.example', foldPlus: false };
const mail = (fromAddress: string, replyTo: string | null = null, authDmarc: string | null = null) => ({ fromAddress, replyTo, authDmarc });

describe('who may see the profile', () => {
  const cases: Array<[string, Parameters<typeof withheldReason>[0], RegExp | null]> = [
    [
      'the customer, replying to herself',
      { emails: [mail('alice@alicecorp.example')], recipients: ['alice@alicecorp.example'], customer: alice },
      null,
    ],
    [
      'a linked address of the customer',
      { emails: [mail('alice.home@mail.example')], recipients: ['alice.home@mail.example'], customer: alice },
      null,
    ],
    [
      'a failed DMARC, whoever it claims to be',
      { emails: [mail('alice@alicecorp.example', null, 'fail')], recipients: ['alice@alicecorp.example'], customer: alice },
      /failed DMARC/,
    ],
    [
      'a Reply-To on the same free-mail domain without DMARC',
      {
        emails: [mail('carol@gmail.com', 'attacker@gmail.com')],
        recipients: ['attacker@gmail.com'],
        customer: { addresses: new Set(['carol@gmail.com']), domain: null, foldPlus: false },
      },
      /Reply-To differs from From/,
    ],
    [
      'a Reply-To to another domain without DMARC',
      { emails: [mail('alice@alicecorp.example', 'a@evil.example')], recipients: ['a@evil.example'], customer: alice },
      /Reply-To differs/,
    ],
    [
      'a verified sender whose Reply-To is a stranger',
      { emails: [mail('alice@alicecorp.example', 'x@evil.example', 'pass')], recipients: ['x@evil.example'], customer: alice },
      /not the thread's customer/,
    ],
    [
      'a verified sender whose Reply-To is her linked address',
      {
        emails: [mail('alice@alicecorp.example', 'alice.home@mail.example', 'pass')],
        recipients: ['alice.home@mail.example'],
        customer: alice,
      },
      null,
    ],
    [
      'a Cc’d participant writing into the thread',
      { emails: [mail('mallory@evil.example')], recipients: ['mallory@evil.example'], customer: alice },
      /participant who is not the thread's customer/,
    ],
    [
      'a colleague of a company customer in domain mode',
      { emails: [mail('ops@acme-corp.example')], recipients: ['ops@acme-corp.example'], customer: acme },
      null,
    ],
    [
      'a look-alike domain in domain mode',
      { emails: [mail('ops@acme-corp.example.evil')], recipients: ['ops@acme-corp.example.evil'], customer: acme },
      /not the thread's customer/,
    ],
    [
      'a sub-domain is not the company domain',
      { emails: [mail('ops@mail.acme-corp.example')], recipients: ['ops@mail.acme-corp.example'], customer: acme },
      /not the thread's customer/,
    ],
    [
      'the customer, but the reply also goes to a stranger',
      { emails: [mail('alice@alicecorp.example')], recipients: ['alice@alicecorp.example', 'eve@evil.example'], customer: alice },
      /reply goes to someone/,
    ],
    [
      'a burst where one mail failed DMARC',
      {
        emails: [mail('alice@alicecorp.example', null, 'pass'), mail('alice@alicecorp.example', null, 'fail')],
        recipients: ['alice@alicecorp.example'],
        customer: alice,
      },
      /failed DMARC/,
    ],
    [
      'a Reply-To equal to From (some clients repeat it)',
      { emails: [mail('alice@alicecorp.example', 'alice@alicecorp.example')], recipients: ['alice@alicecorp.example'], customer: alice },
      null,
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      const reason = withheldReason(input);
      if (expected === null) expect(reason).toBeNull();
      else expect(reason).toMatch(expected);
    });
  }

  it('compares plus-folded addresses when the store folds them', () => {
    const folded: CustomerIdentity = { addresses: new Set(['ann@shop.example']), domain: null, foldPlus: true };
    expect(isCustomerAddress(folded, 'ann+orders@shop.example')).toBe(true);
    expect(isCustomerAddress({ ...folded, foldPlus: false }, 'ann+orders@shop.example')).toBe(false);
  });
});

describe('which messages may be the source of the customer’s facts', () => {
  const base = { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: null, entityId: 'e_alice' };
  it('accepts the customer’s own unauthenticated mail', () => expect(trustedAsFactSource(base, 'e_alice')).toBe(true));
  it('refuses a participant’s mail', () =>
    expect(trustedAsFactSource({ ...base, fromAddress: 'mallory@evil.example', entityId: 'e_mallory' }, 'e_alice')).toBe(false));
  it('refuses a failed DMARC', () => expect(trustedAsFactSource({ ...base, authDmarc: 'fail' }, 'e_alice')).toBe(false));
  it('refuses an unverified redirecting Reply-To', () =>
    expect(trustedAsFactSource({ ...base, replyTo: 'x@gmail.com' }, 'e_alice')).toBe(false));
  it('accepts a verified one', () =>
    expect(trustedAsFactSource({ ...base, replyTo: 'x@gmail.com', authDmarc: 'pass' }, 'e_alice')).toBe(true));
});
