import { describe, expect, it } from 'vitest';
import { orderKeys, sharesKey, type OrderSettings } from '../../src/mail/ingest-order.ts';
import type { MailAddress, ParsedEmail } from '../../src/mail/parse-message.ts';

const settings: OrderSettings = { supportAddress: 'support@acme.example', foldPlusAddresses: true, entityKey: { mode: 'address' } };
const address = (a: string): MailAddress => ({ address: a, name: null }) as MailAddress;

function email(overrides: Partial<ParsedEmail>): ParsedEmail {
  return {
    messageId: '<m@x>',
    inReplyTo: [],
    references: [],
    from: address('alice@example.com'),
    replyTo: [],
    to: [address('support@acme.example')],
    cc: [],
    subject: 'Invoice',
    date: null,
    rawHeaders: new Map(),
    contentType: 'text/plain',
    textPart: 'hi',
    html: null,
    bodyText: 'hi',
    attachments: [],
    headerCount: 5,
    reportType: null,
    reportParts: [],
    repairs: [],
    ...overrides,
  };
}

const keysOf = (overrides: Partial<ParsedEmail>, id = '<m@x>') => orderKeys(email(overrides), id, settings);
const related = (a: string[], b: string[]) => sharesKey(a, new Set(b));

describe('which messages of a chunk may be stored side by side', () => {
  it('unrelated customers with different subjects are independent', () => {
    expect(
      related(
        keysOf({ from: address('alice@example.com') }, '<1@x>'),
        keysOf({ from: address('bob@example.org'), subject: 'Refund' }, '<2@x>'),
      ),
    ).toBe(false);
  });

  it('a reply depends on the message it references, even from another sender', () => {
    const question = keysOf({}, '<q@x>');
    const reply = keysOf({ from: address('carol@example.net'), subject: 'Something else', inReplyTo: ['<q@x>'] }, '<r@x>');
    expect(related(question, reply)).toBe(true);
  });

  it('two messages that reference the same unknown message depend on each other', () => {
    expect(
      related(
        keysOf({ references: ['<old@x>'] }, '<1@x>'),
        keysOf({ from: address('dan@example.net'), subject: 'Other', references: ['<old@x>'] }, '<2@x>'),
      ),
    ).toBe(true);
  });

  it('the same customer, also through a plus address, is one lane', () => {
    expect(related(keysOf({ subject: 'A' }, '<1@x>'), keysOf({ from: address('alice+billing@example.com'), subject: 'B' }, '<2@x>'))).toBe(
      true,
    );
  });

  it('a sender who was a recipient of an earlier message depends on it (they may join that thread)', () => {
    const first = keysOf({ cc: [address('erin@example.org')] }, '<1@x>');
    const second = keysOf({ from: address('erin@example.org'), subject: 'Different' }, '<2@x>');
    expect(related(first, second)).toBe(true);
  });

  it('colleagues of one company depend on each other in domain mode only', () => {
    const a = email({ from: address('hank@globex.example'), subject: 'A' });
    const b = email({ from: address('homer@globex.example'), subject: 'B' });
    const domain: OrderSettings = { ...settings, entityKey: { mode: 'domain' } };
    expect(related(orderKeys(a, '<1@x>', domain), orderKeys(b, '<2@x>', domain))).toBe(true);
    expect(related(orderKeys(a, '<1@x>', settings), orderKeys(b, '<2@x>', settings))).toBe(false);
  });

  it('the same normalised subject is one lane (the subject rule may join them)', () => {
    expect(
      related(keysOf({ subject: 'Invoice' }, '<1@x>'), keysOf({ from: address('zed@example.org'), subject: 'RE: invoice' }, '<2@x>')),
    ).toBe(true);
  });
});

describe('waiting for an earlier message', () => {
  it('is needed when the two share any key, and only then', () => {
    expect(sharesKey(['id:<a>', 'address:x'], new Set(['address:x']))).toBe(true);
    expect(sharesKey(['id:<a>'], new Set(['id:<b>', 'address:x']))).toBe(false);
    expect(sharesKey([], new Set(['id:<b>']))).toBe(false);
  });
});
