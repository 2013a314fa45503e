/**
 * Who counts as the team (src/mail/team-identity.ts): a table of channels, From addresses and
 * Authentication-Results headers, each with the verdict it must get; which thread a team message
 * may join; Bcc fields of a Sent copy.
 */
import { describe, expect, it } from 'vitest';
import { trustedDmarc } from '../../src/mail/auth-results.ts';
import { bccAddresses, decideTeamMail, isTeamAddress, threadForTeamMessage, type TeamMailInput } from '../../src/mail/team-identity.ts';

const MX = 'mx.acme.example';
const TEAM = { supportAddress: 'support@acme.example', staffAddresses: ['bob@acme.example', 'billing@acme-billing.example'] };

function input(overrides: Partial<TeamMailInput>): TeamMailInput {
  return { channel: 'inbound', from: 'bob@acme.example', fromFields: 1, authenticationResults: [], authservId: MX, ...overrides };
}

const PASS = `${MX}; spf=pass smtp.mailfrom=acme.example; dkim=pass header.d=acme.example; dmarc=pass (p=reject) header.from=acme.example`;

describe('decideTeamMail', () => {
  const cases: Array<[string, Partial<TeamMailInput>, 'team' | 'unproven' | 'not-team', RegExp?]> = [
    // Proven by the channel.
    ['staff mail in the Sent folder', { channel: 'sent-folder' }, 'team', /Sent folder/],
    ['the served address in the Sent folder', { channel: 'sent-folder', from: 'support@acme.example' }, 'team'],
    ['the served address in Sent, any case', { channel: 'sent-folder', from: 'Support@ACME.example' }, 'team'],
    ['a plus-address of the served mailbox in Sent', { channel: 'sent-folder', from: 'support+billing@acme.example' }, 'team'],
    ['a customer forward found in Sent', { channel: 'sent-folder', from: 'alice@example.com' }, 'not-team', /not a team address/],
    ['a BCC copy of a customer mail in Sent', { channel: 'sent-folder', from: 'carla@customer.example' }, 'not-team'],
    ['Sent mail with no From', { channel: 'sent-folder', from: null }, 'not-team'],
    ['a look-alike domain in Sent', { channel: 'sent-folder', from: 'support@acme-example.com' }, 'not-team'],
    ['a staff local part at another domain in Sent', { channel: 'sent-folder', from: 'bob@gmail.com' }, 'not-team'],
    // Proven by an aligned DMARC pass from the trusted server.
    ['inbound staff mail with an aligned pass', { authenticationResults: [PASS] }, 'team', /dmarc=pass/],
    ['the served address with an aligned pass (Cc to itself)', { from: 'support@acme.example', authenticationResults: [PASS] }, 'team'],
    [
      'a staff address at a second domain, aligned',
      { from: 'billing@acme-billing.example', authenticationResults: [`${MX}; dmarc=pass header.from=acme-billing.example`] },
      'team',
    ],
    ['header.from in upper case', { authenticationResults: [`${MX}; dmarc=pass header.from=ACME.EXAMPLE`] }, 'team'],
    ['header.from written as an address', { authenticationResults: [`${MX}; dmarc=pass header.from=bob@acme.example`] }, 'team'],
    ['the authserv-id with a version', { authenticationResults: [`${MX} 1; dmarc=pass header.from=acme.example`] }, 'team'],
    ['comments in the result', { authenticationResults: [`${MX}; dmarc=pass (policy=reject; aligned) header.from=acme.example`] }, 'team'],
    // Not proven: the stranger's mail.
    ['dmarc=fail', { authenticationResults: [`${MX}; dmarc=fail (p=reject) header.from=acme.example`] }, 'unproven', /dmarc=fail/],
    ['dmarc=none', { authenticationResults: [`${MX}; dmarc=none header.from=acme.example`] }, 'unproven', /dmarc=none/],
    ['dmarc=temperror', { authenticationResults: [`${MX}; dmarc=temperror header.from=acme.example`] }, 'unproven'],
    ['dmarc=bestguesspass (not a result)', { authenticationResults: [`${MX}; dmarc=bestguesspass header.from=acme.example`] }, 'unproven'],
    [
      'only SPF and DKIM pass',
      { authenticationResults: [`${MX}; spf=pass smtp.mailfrom=acme.example; dkim=pass header.d=acme.example`] },
      'unproven',
      /dmarc=none/,
    ],
    ['no Authentication-Results at all', {}, 'unproven', /no authentication/],
    [
      'a pass for another domain (unaligned)',
      { authenticationResults: [`${MX}; dmarc=pass header.from=attacker.example`] },
      'unproven',
      /attacker\.example/,
    ],
    ['a pass with no header.from', { authenticationResults: [`${MX}; dmarc=pass`] }, 'unproven', /no stated domain/],
    [
      'a subdomain address that is not in STAFF_ADDRESSES',
      { from: 'bob@eu.acme.example', authenticationResults: [`${MX}; dmarc=pass header.from=acme.example`] },
      'not-team',
    ],
    [
      'a pass from an untrusted authserv-id',
      { authenticationResults: ['mx.attacker.example; dmarc=pass header.from=acme.example'] },
      'unproven',
    ],
    [
      'a forged trusted header below the real failing one',
      { authenticationResults: [`${MX}; dmarc=fail header.from=acme.example`, PASS] },
      'unproven',
      /dmarc=fail/,
    ],
    [
      'a forged pass above, from another authserv-id',
      { authenticationResults: ['evil.example; dmarc=pass header.from=acme.example', `${MX}; dmarc=fail header.from=acme.example`] },
      'unproven',
    ],
    ['the real pass on top, a forged fail below', { authenticationResults: [PASS, `${MX}; dmarc=fail header.from=acme.example`] }, 'team'],
    [
      'two DMARC results in one header, one failing',
      { authenticationResults: [`${MX}; dmarc=pass header.from=acme.example; dmarc=fail header.from=acme.example`] },
      'unproven',
    ],
    [
      'two DMARC passes for different domains',
      { authenticationResults: [`${MX}; dmarc=pass header.from=acme.example; dmarc=pass header.from=other.example`] },
      'unproven',
    ],
    ['a pass but two From fields', { fromFields: 2, authenticationResults: [PASS] }, 'unproven', /2 From fields/],
    ['no TRUSTED_AUTHSERV_ID configured', { authservId: undefined, authenticationResults: [PASS] }, 'unproven', /TRUSTED_AUTHSERV_ID/],
    ['a plus-address of a staff address, aligned', { from: 'bob+tickets@acme.example', authenticationResults: [PASS] }, 'team'],
    // Not a team address at all: an ordinary customer, whatever the headers say.
    [
      'a customer with a pass',
      { from: 'alice@example.com', authenticationResults: [`${MX}; dmarc=pass header.from=example.com`] },
      'not-team',
    ],
    ['a colleague at the team domain who is not staff', { from: 'carol@acme.example', authenticationResults: [PASS] }, 'not-team'],
    [
      'a display-name trick is not an address',
      { from: 'support@acme.example@attacker.example', authenticationResults: [PASS] },
      'not-team',
    ],
  ];
  it.each(cases)('%s', (_name, overrides, kind, detail) => {
    const verdict = decideTeamMail(input(overrides), TEAM);
    expect(verdict.kind).toBe(kind);
    if (detail) expect(verdict.detail).toMatch(detail);
  });
});

describe('isTeamAddress', () => {
  const cases: Array<[string | null, boolean]> = [
    ['support@acme.example', true],
    ['SUPPORT@Acme.Example', true],
    ['support+vip@acme.example', true],
    ['bob@acme.example', true],
    ['bob+x@acme.example', true],
    ['billing@acme-billing.example', true],
    ['alice@example.com', false],
    ['support@acme.example.attacker.example', false],
    ['supportt@acme.example', false],
    ['', false],
    [null, false],
    ['not an address', false],
  ];
  it.each(cases)('%s → %s', (address, expected) => expect(isTeamAddress(address, TEAM)).toBe(expected));
});

describe('threadForTeamMessage', () => {
  const A = { threadId: 't_a', customerAddresses: ['alice@example.com'] };
  const B = { threadId: 't_b', customerAddresses: ['bob@customer.example', 'bob.work@corp.example'] };
  const cases: Array<[string, Array<typeof A>, string[], boolean, string | null]> = [
    ['a reply to A in A’s thread', [A], ['alice@example.com'], false, 't_a'],
    ['a reply to B carrying In-Reply-To of A’s mail', [A], ['bob@customer.example'], false, null],
    ['a reply to B whose References name A’s thread first, then B’s', [A, B], ['bob@customer.example'], false, 't_b'],
    ['a reply to B’s linked address', [A, B], ['bob.work@corp.example'], false, 't_b'],
    ['A only in Cc', [A], ['someone@else.example', 'alice@example.com'], false, 't_a'],
    ['recipient case differs', [A], ['Alice@Example.COM'], false, 't_a'],
    ['a plus-address of A with folding on', [A], ['alice+orders@example.com'], true, 't_a'],
    ['a plus-address of A with folding off', [A], ['alice+orders@example.com'], false, null],
    ['no recipients at all', [A], [], false, null],
    ['no candidate threads', [], ['alice@example.com'], false, null],
    ['a thread with no known customer address', [{ threadId: 't_x', customerAddresses: [] }], ['alice@example.com'], false, null],
  ];
  it.each(cases)('%s', (_name, candidates, recipients, foldPlus, expected) =>
    expect(threadForTeamMessage(candidates, recipients, foldPlus)).toBe(expected),
  );
});

describe('bccAddresses', () => {
  const cases: Array<[string[], string[]]> = [
    [['bob@customer.example'], ['bob@customer.example']],
    [['Bob <bob@customer.example>, carla@customer.example'], ['bob@customer.example', 'carla@customer.example']],
    [['"Doe, Jane" <jane@x.example>'], ['jane@x.example']],
    [['undisclosed-recipients:;'], []],
    [[''], []],
    [
      ['a@x.example', 'b@y.example'],
      ['a@x.example', 'b@y.example'],
    ],
  ];
  it.each(cases)('%j', (fields, expected) => expect(bccAddresses(fields)).toEqual(expected));

  it('reads a long hostile field in bounded time and count', () => {
    const addresses = bccAddresses([Array.from({ length: 5000 }, (_, i) => `u${i}@x.example`).join(', '), '<'.repeat(100_000)]);
    expect(addresses).toHaveLength(100);
  });
});

describe('trustedDmarc', () => {
  it('reads the header.from of the trusted server’s DMARC result', () => {
    expect(trustedDmarc([PASS], MX)).toEqual({ result: 'pass', headerFrom: 'acme.example' });
  });
  it('is null without the trusted server’s header', () => {
    expect(trustedDmarc(['other.example; dmarc=pass header.from=acme.example'], MX)).toBeNull();
    expect(trustedDmarc([PASS], undefined)).toBeNull();
  });
  it('reports no result when the trusted header has no DMARC', () => {
    expect(trustedDmarc([`${MX}; spf=pass smtp.mailfrom=acme.example`], MX)).toEqual({ result: null, headerFrom: null });
  });
});
