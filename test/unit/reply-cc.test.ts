import { describe, expect, it } from 'vitest';
import { FREE_MAIL_DOMAINS } from '../../src/mail/addresses.ts';
import { withheldReason, type CustomerIdentity } from '../../src/memory/disclosure.ts';
import { decideCc, isAutomatedAddress, isListAddress, type CcPolicyInput } from '../../src/memory/reply-cc.ts';

const alice: CustomerIdentity = {
  addresses: new Set(['alice@alicecorp.example', 'alice.home@mail.example']),
  domain: null,
  foldPlus: false,
};
const SUPPORT = 'support@acme.example';

function input(overrides: Partial<CcPolicyInput> = {}): CcPolicyInput {
  return {
    mode: 'all',
    // Our own address is in every customer's To: left out here so `dropped` lists only what a test adds.
    to: [],
    cc: [],
    replyTo: 'alice@alicecorp.example',
    sender: { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: null },
    customer: alice,
    ownAddresses: [SUPPORT, 'ops@acme.example'],
    isFreeMailDomain: (d) => FREE_MAIL_DOMAINS.has(d),
    max: 10,
    ...overrides,
  };
}

const reasonOf = (decision: ReturnType<typeof decideCc>, address: string) => decision.dropped.find((d) => d.address === address)?.reason;

describe('who stays in Cc', () => {
  it('keeps the customer’s other address and a colleague at the sender’s company', () => {
    const d = decideCc(input({ cc: ['alice.home@mail.example', 'Bob@AliceCorp.example'] }));
    expect(d.cc).toEqual(['alice.home@mail.example', 'bob@alicecorp.example']);
  });

  it('keeps people the customer wrote To besides us, in Cc', () => {
    const d = decideCc(input({ to: [SUPPORT, 'carol@alicecorp.example'] }));
    expect(d.cc).toEqual(['carol@alicecorp.example']);
    expect(d.dropped).toEqual([{ address: SUPPORT, reason: 'our own address' }]);
  });

  it('keeps a stranger only when the sender passed DMARC', () => {
    const cc = ['accountant@books.example'];
    expect(decideCc(input({ cc })).cc).toEqual([]);
    expect(reasonOf(decideCc(input({ cc })), 'accountant@books.example')).toBe('stranger and the sender is not authenticated');
    expect(decideCc(input({ cc, sender: { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: 'none' } })).cc).toEqual([]);
    expect(decideCc(input({ cc, sender: { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: 'pass' } })).cc).toEqual(cc);
  });

  it('a free-mail domain makes nobody a colleague', () => {
    const d = decideCc(
      input({
        replyTo: 'alice@gmail.com',
        sender: { fromAddress: 'alice@gmail.com', replyTo: null, authDmarc: null },
        cc: ['someone@gmail.com'],
        customer: { addresses: new Set(['alice@gmail.com']), domain: null, foldPlus: false },
      }),
    );
    expect(d.cc).toEqual([]);
  });

  it('REPLY_KEEP_CC=customer keeps only the customer’s own addresses; none keeps nobody', () => {
    const cc = ['alice.home@mail.example', 'bob@alicecorp.example', 'x@books.example'];
    const sender = { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: 'pass' };
    expect(decideCc(input({ mode: 'customer', cc, sender })).cc).toEqual(['alice.home@mail.example']);
    expect(decideCc(input({ mode: 'none', cc, sender })).cc).toEqual([]);
  });

  it('keeps the order the message had and removes duplicates in any case or tag form', () => {
    const d = decideCc(
      input({ cc: ['bob@alicecorp.example', 'BOB@alicecorp.example', 'bob+x@alicecorp.example', 'dan@alicecorp.example'] }),
    );
    expect(d.cc).toEqual(['bob@alicecorp.example', 'dan@alicecorp.example']);
    expect(d.dropped.map((x) => x.reason)).toEqual(['duplicate', 'duplicate']);
  });
});

describe('hostile Cc lists', () => {
  it('a forged From with a stranger in Cc: the stranger is not copied', () => {
    const d = decideCc(input({ cc: ['mallory@evil.example'] }));
    expect(d.cc).toEqual([]);
  });

  it('a failed DMARC copies nobody, not even the customer’s colleagues', () => {
    const d = decideCc(
      input({
        cc: ['bob@alicecorp.example', 'alice.home@mail.example'],
        sender: { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: 'fail' },
      }),
    );
    expect(d.cc).toEqual([]);
    expect(d.dropped.every((x) => x.reason === 'untrusted sender')).toBe(true);
  });

  it('a redirecting Reply-To without DMARC pass copies nobody', () => {
    const sender = { fromAddress: 'alice@alicecorp.example', replyTo: 'alice@evil.example', authDmarc: null };
    expect(decideCc(input({ replyTo: 'alice@evil.example', sender, cc: ['bob@alicecorp.example'] })).cc).toEqual([]);
  });

  it.each([
    ['the support address', SUPPORT],
    ['in capitals', 'SUPPORT@ACME.EXAMPLE'],
    ['with a tag', 'support+billing@acme.example'],
    ['with a trailing dot', 'support@acme.example.'],
    ['in angle brackets', '<support@acme.example>'],
    ['fullwidth letters', 'ｓｕｐｐｏｒｔ@acme.example'],
    ['a fullwidth domain', 'support@ａｃｍｅ.example'],
    ['a staff address', 'Ops@Acme.Example'],
  ])('never our own address: %s', (_what, address) => {
    const d = decideCc(input({ cc: [address], sender: { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: 'pass' } }));
    expect(d.cc).toEqual([]);
  });

  it('never our own address in its IDN forms', () => {
    const own = ['support@bücher.example'];
    for (const address of ['support@BÜCHER.example', 'support@xn--bcher-kva.example', 'SUPPORT@XN--BCHER-KVA.EXAMPLE']) {
      const d = decideCc(
        input({ ownAddresses: own, cc: [address], sender: { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: 'pass' } }),
      );
      expect(d.cc, address).toEqual([]);
      expect(reasonOf(d, d.dropped[0]!.address)).toBe('our own address');
    }
  });

  it('never the reply’s own recipient again', () => {
    const d = decideCc(input({ cc: ['Alice@AliceCorp.example'] }));
    expect(d.cc).toEqual([]);
    expect(d.dropped[0]!.reason).toBe('the reply is addressed to it');
  });

  it.each([
    'dev-list@lists.alicecorp.example',
    'announce@list.alicecorp.example',
    'team@googlegroups.com',
    'team@groups.io',
    'listserv@alicecorp.example',
    'majordomo@alicecorp.example',
    'team-request@alicecorp.example',
    'owner-team@alicecorp.example',
    'team-bounces@alicecorp.example',
  ])('never a list address: %s', (address) => {
    const d = decideCc(input({ cc: [address], sender: { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: 'pass' } }));
    expect(d.cc).toEqual([]);
    expect(d.dropped[0]!.reason).toBe('list address');
  });

  it.each([
    'noreply@alicecorp.example',
    'no-reply@alicecorp.example',
    'No_Reply.Billing@alicecorp.example',
    'donotreply@alicecorp.example',
    'do-not-reply+123@alicecorp.example',
    'MAILER-DAEMON@alicecorp.example',
    'postmaster@alicecorp.example',
    'bounces@alicecorp.example',
    'notifications@alicecorp.example',
    'autoreply@alicecorp.example',
  ])('never an automated address: %s', (address) => {
    const d = decideCc(input({ cc: [address] }));
    expect(d.cc).toEqual([]);
    expect(d.dropped[0]!.reason).toBe('automated address');
  });

  it.each([
    'undisclosed-recipients:;',
    'not an address',
    '"quoted local"@alicecorp.example',
    'a@b@',
    '@alicecorp.example',
    'bob@exa mple.com',
    'x'.repeat(400) + '@alicecorp.example',
  ])('drops what is not a plain address: %j', (address) => {
    expect(decideCc(input({ cc: [address] })).cc).toEqual([]);
  });

  it('a huge Cc list: at most the cap is kept and only the first 200 are looked at', () => {
    const cc = Array.from({ length: 50_000 }, (_, i) => `p${i}@alicecorp.example`);
    const d = decideCc(input({ cc }));
    expect(d.cc).toHaveLength(10);
    expect(d.cc[0]).toBe('p0@alicecorp.example');
    expect(d.dropped.length + d.cc.length).toBe(200);
    expect(d.dropped.every((x) => x.reason === 'over the cap')).toBe(true);
  });

  it('a kept Cc who is not the customer withholds the profile from the turn', () => {
    const sender = { fromAddress: 'alice@alicecorp.example', replyTo: null, authDmarc: 'pass' };
    const d = decideCc(input({ cc: ['bob@alicecorp.example'], sender }));
    expect(withheldReason({ emails: [sender], recipients: ['alice@alicecorp.example', ...d.cc], customer: alice })).toMatch(
      /not the thread's customer/,
    );
    const own = decideCc(input({ cc: ['alice.home@mail.example'], sender }));
    expect(withheldReason({ emails: [sender], recipients: ['alice@alicecorp.example', ...own.cc], customer: alice })).toBeNull();
  });
});

describe('address roles', () => {
  it('tells people from software and lists', () => {
    expect(isAutomatedAddress('noreply@x.example')).toBe(true);
    expect(isAutomatedAddress('nora@x.example')).toBe(false);
    expect(isAutomatedAddress('replies@x.example')).toBe(false);
    expect(isListAddress('listing@x.example')).toBe(false);
    expect(isListAddress('lisa@lists.x.example')).toBe(true);
    expect(isListAddress('bob@x.example')).toBe(false);
  });
});
