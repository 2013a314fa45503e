import { describe, expect, it } from 'vitest';
import {
  base64Forms,
  erasureNeedles,
  REDACTED_ADDRESS,
  REDACTED_NAME,
  Redactor,
  searchPlan,
  type Anchor,
  type ErasureNeedles,
} from '../../src/mail/erasure-patterns.ts';

const alice = erasureNeedles({ addresses: ['alice@alicecorp.example', 'a.ace1987@gmail.com'], names: ['Alice Ace', 'Alice Ace', null] });
const text = new Redactor(alice, 'text');

/** What the database's candidate search (strpos on lower(value)) would say, simulated. */
function prefilter(plan: Anchor[][], value: string): boolean {
  const lower = value.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return plan.some((anchors) => anchors.every((a) => ('folded' in a ? lower.includes(a.folded) : a.exact.some((v) => value.includes(v)))));
}

describe('needles', () => {
  it('takes addresses, full names in both orders, distinctive handles and weak given/family names', () => {
    expect(alice.addresses).toEqual(['alice@alicecorp.example', 'a.ace1987@gmail.com']);
    expect(alice.fullNames).toEqual(['Alice Ace', 'Ace, Alice']);
    expect(alice.handles).toEqual(['a.ace1987']);
    expect(alice.labels).toEqual(['alice_alicecorp_example', 'a_ace1987_gmail_com', 'a_ace1987']);
    expect(alice.weak).toEqual(['Alice', 'Ace']);
  });

  it('adds the Unicode form of an IDN domain and the NFD form of a name', () => {
    const n = erasureNeedles({ addresses: ['kunde@xn--bcher-kva.example'], names: ['Zoë Ünal'] });
    expect(n.addresses).toEqual(['kunde@xn--bcher-kva.example', 'kunde@bücher.example']);
    expect(n.fullNames).toContain('Zoë Ünal'.normalize('NFD'));
  });

  it.each([
    ['a one-word display name is weak only', ['Ann'], { fullNames: [], weak: ['Ann'] }],
    ['names under three letters are ignored', ['Al', 'Jo Li'], { fullNames: [], weak: [] }],
    [
      'particles are never needles of their own',
      ['Ludwig van Beethoven'],
      { fullNames: ['Ludwig van Beethoven'], weak: ['Ludwig', 'Beethoven'] },
    ],
    ['an address used as a display name is not a name', ['alice@alicecorp.example'], { fullNames: [], weak: [] }],
  ])('%s', (_what, names, expected) => {
    const n = erasureNeedles({ addresses: [], names });
    expect(n.fullNames).toEqual(expected.fullNames);
    expect(n.weak).toEqual(expected.weak);
  });

  it('cleans quotes, backslashes and control characters out of names, so JSON text stays JSON', () => {
    const n = erasureNeedles({ addresses: [], names: ['Alice "The Ace"\\ Smith\u0007'] });
    for (const needle of [...n.fullNames, ...n.weak]) expect(needle).not.toMatch(/["\\\u0000-\u001f]/);
    const redactor = new Redactor(n, 'text');
    const json = JSON.stringify({ note: 'Alice The Ace Smith called', list: ['Alice The Ace Smith'] });
    expect(() => JSON.parse(redactor.redact(json).value)).not.toThrow();
    expect(redactor.redact(json).value).not.toMatch(/Alice/);
  });

  it('a role local part is neither a handle nor a weak needle; a plain one is weak; a distinctive one is a handle', () => {
    const n = erasureNeedles({
      addresses: ['support@x.example', 'no-reply@x.example', 'alice@x.example', 'j.smith-77@x.example'],
      names: [],
    });
    expect(n.handles).toEqual(['j.smith-77']);
    expect(n.weak).toEqual(['alice']);
  });
});

describe('addresses', () => {
  it.each([
    'Alice@AliceCorp.Example',
    'ALICE@ALICECORP.EXAMPLE',
    'Cc: "ALICE ACE" <Alice@AliceCorp.Example>',
    'mailto:alice@alicecorp.example?subject=hi',
    'write to alice=40alicecorp.example',
    'https://x.example/?email=alice%40alicecorp.example',
    'alice&#64;alicecorp.example',
    'alice&#x40;alicecorp.example',
    'alice&commat;alicecorp.example',
    'alice [at] alicecorp.example',
    'alice(at)alicecorp.example',
    'alice+billing@alicecorp.example',
    'QP <=3Calice@alicecorp.example=3E>',
    'end of a sentence: alice@alicecorp.example.',
    '["bob@bob.example","alice@alicecorp.example"]',
    'A.Ace1987@Gmail.com',
  ])('finds %j', (value) => {
    const r = text.redact(value);
    expect(r.changed).toBe(true);
    expect(r.value).toContain(REDACTED_ADDRESS);
    expect(r.value.toLowerCase()).not.toMatch(/alice(@|=40|%40|&#|&commat;| \[at\]|\(at\)|\+billing)|a\.ace1987/);
    expect(prefilter(searchPlan(alice).text, value)).toBe(true);
  });

  it.each([
    'malice@alicecorp.example',
    'xalice@alicecorp.example',
    'alice.smith@alicecorp.example',
    'alice@alicecorp.examples',
    'alice@alicecorp.example.org',
    'alice@sub.alicecorp.example',
    'alice@othercorp.example',
    'the alicecorp.example domain',
  ])('leaves %j alone (another address)', (value) => {
    expect(text.redact(value)).toEqual({ value, changed: false, strong: false });
  });

  it('finds an IDN address written in punycode or in Unicode, in any case', () => {
    const r = new Redactor(erasureNeedles({ addresses: ['kunde@xn--bcher-kva.example'], names: [] }), 'text');
    for (const value of ['kunde@xn--bcher-kva.example', 'KUNDE@BÜCHER.EXAMPLE', 'Kunde@Bücher.Example']) {
      expect(r.redact(value).value).toBe(REDACTED_ADDRESS);
    }
  });
});

describe('names', () => {
  it.each([
    ['ALICE ACE wrote', `${REDACTED_NAME} wrote`],
    ['alice ace', REDACTED_NAME],
    ['Alice   Ace', REDACTED_NAME],
    ['Alice\u00a0Ace', REDACTED_NAME],
    ['Alice.Ace', REDACTED_NAME],
    ['Alice_Ace', REDACTED_NAME],
    ['Alice%20Ace', REDACTED_NAME],
    ['Alice&nbsp;Ace', REDACTED_NAME],
    ['Alice\r\n Ace', REDACTED_NAME],
    ['Ace, Alice', REDACTED_NAME],
    ["Alice Ace's order", `${REDACTED_NAME}'s order`],
    ['Alice Ace’s order', `${REDACTED_NAME}’s order`],
    ['(Alice Ace)', `(${REDACTED_NAME})`],
  ])('%j becomes %j', (value, expected) => {
    expect(text.redact(value).value).toBe(expected);
    expect(prefilter(searchPlan(alice).text, value)).toBe(true);
  });

  it.each(['Alicea Ace', 'Alice Aces', 'MalAlice Ace', 'Alice Acer', 'Alice Acé', 'Alice'])('leaves %j alone (no full name)', (value) => {
    expect(text.redact(value).changed).toBe(false);
  });

  it('given and family names go only where the full name or an address also occurs', () => {
    expect(text.redact('Alice asked about the ace of spades').changed).toBe(false);
    expect(text.redact('Alice Ace wrote. Alice asked about an ace.').value).toBe(
      `${REDACTED_NAME} wrote. ${REDACTED_NAME} asked about an ${REDACTED_NAME}.`,
    );
    expect(text.redact('alice@alicecorp.example: Alice asked').value).toBe(`${REDACTED_ADDRESS}: ${REDACTED_NAME} asked`);
    expect(text.redact('Alice asked', { weak: 'always' }).value).toBe(`${REDACTED_NAME} asked`);
  });

  it('matches on word boundaries: "Ann" never redacts "Annual", "Joann" or "Anne"', () => {
    const ann = new Redactor(erasureNeedles({ addresses: [], names: ['Ann Lee'] }), 'text');
    expect(ann.redact('Annual report for Joann Leeds and Anne Leeward').changed).toBe(false);
    expect(ann.redact('Ann Lee said Ann likes the Annual plan; Lee-side, Leeds').value).toBe(
      `${REDACTED_NAME} said ${REDACTED_NAME} likes the Annual plan; ${REDACTED_NAME}-side, Leeds`,
    );
  });

  it('folds non-ASCII letters and Unicode normal forms, and treats accented letters as part of a word', () => {
    const zoe = new Redactor(erasureNeedles({ addresses: [], names: ['Zoë Ünal'] }), 'text');
    for (const value of ['ZOË ÜNAL', 'zoë ünal', 'Zoë Ünal'.normalize('NFD'), 'Zo&#235; &#220;nal', 'Zo&#xEB; Ünal']) {
      expect(zoe.redact(value).value).toBe(REDACTED_NAME);
    }
    expect(zoe.redact('Zoëlle Ünalan').changed).toBe(false);
    const ivan = new Redactor(erasureNeedles({ addresses: [], names: ['Иван Петров'] }), 'text');
    expect(ivan.redact('ИВАН ПЕТРОВ и Иван').value).toBe(`${REDACTED_NAME} и ${REDACTED_NAME}`);
    expect(prefilter(searchPlan(erasureNeedles({ addresses: [], names: ['Иван Петров'] })).text, 'Иван Петров')).toBe(true);
  });

  it('finds addresses, handles and names in the snake_case labels the product makes of intents and tags', () => {
    expect(text.redact('add_user_alice_alicecorp_example').value).toBe(`add_user_${REDACTED_NAME}`);
    expect(text.redact('["user_management","invite_alice_ace","a_ace1987"]').value).toBe(
      `["user_management","invite_${REDACTED_NAME}","${REDACTED_NAME}"]`,
    );
    expect(text.redact('malice_alicecorp_example_org').changed).toBe(false);
    const zoe = new Redactor(erasureNeedles({ addresses: [], names: ['Zoë Ünal'] }), 'text');
    expect(zoe.redact('call_zoe_unal and Zoe Unal').value).toBe(`call_${REDACTED_NAME} and ${REDACTED_NAME}`);
  });

  it('a given name never redacts inside an address, a full name does', () => {
    expect(text.redact('Alice Ace wrote from alice.ace@other.example; ask alice@bob.example or bob@alice.example').value).toBe(
      `${REDACTED_NAME} wrote from ${REDACTED_NAME}@other.example; ask alice@bob.example or bob@alice.example`,
    );
  });

  it('a distinctive handle stands on its own, but not as the local part of another address', () => {
    expect(text.redact('see github.com/a.ace1987 for details').value).toBe(`see github.com/${REDACTED_NAME} for details`);
    expect(text.redact('a.ace1987@other.example').changed).toBe(false);
  });
});

describe('raw bytes', () => {
  const zoe = erasureNeedles({ addresses: ['zoe@unal.example'], names: ['Zoë Ünal'] });
  const bytes = new Redactor(zoe, 'bytes');
  const latin1 = (b: Buffer) => b.toString('latin1');

  it.each([
    ['UTF-8', Buffer.from('From: ZOË ÜNAL <Zoe@Unal.Example>\r\n', 'utf8')],
    ['ISO-8859-1', Buffer.from('From: Zoë Ünal <zoe@unal.example>\r\n', 'latin1')],
    ['percent-encoded UTF-8', Buffer.from("filename*=utf-8''Zo%C3%AB%20%C3%9Cnal.pdf; zoe%40unal.example", 'latin1')],
    ['HTML entities', Buffer.from('<p>Zo&euml;? no: Zo&#235; &#220;nal &lt;zoe&#64;unal.example&gt;</p>', 'latin1')],
    ['a non-breaking space in UTF-8', Buffer.from('Zoë\u00a0Ünal', 'utf8')],
  ])('finds the name and address as %s', (_what, raw) => {
    const r = bytes.redact(latin1(raw));
    expect(r.changed).toBe(true);
    expect(r.value).not.toMatch(/nal\b|zoe@/i);
  });

  it('a letter in a UTF-8 or ISO-8859-1 word is part of the word', () => {
    const ann = new Redactor(erasureNeedles({ addresses: [], names: ['Ann Lee'] }), 'bytes');
    expect(ann.redact(latin1(Buffer.from('Ann Leé and Ann Leeß', 'utf8'))).changed).toBe(false);
    expect(ann.redact(latin1(Buffer.from('Ann Leé', 'latin1'))).changed).toBe(false);
    expect(ann.redact(latin1(Buffer.from('“Ann Lee”', 'utf8'))).changed).toBe(true);
  });

  it("the raw search plan spells non-ASCII words as encode(bytea, 'escape') writes them", () => {
    const plan = searchPlan(erasureNeedles({ addresses: [], names: ['Иван Петров'] }));
    const escaped = [...Buffer.from('x Иван Петров', 'utf8')]
      .map((b) => (b >= 0x80 ? `\\${b.toString(8)}` : String.fromCharCode(b)))
      .join('');
    expect(prefilter(plan.raw, escaped)).toBe(true);
  });
});

describe('base64 forms', () => {
  it.each([0, 1, 2, 3, 4, 5])('every needle is found in base64 whatever the %i bytes before it', (before) => {
    const forms = base64Forms(alice);
    for (const needle of ['alice@alicecorp.example', 'ALICE ACE', 'Alice Ace', 'alice ace', 'a.ace1987']) {
      const encoded = Buffer.from(`${'x'.repeat(before)}${needle} and more`).toString('base64');
      expect(
        forms.some((f) => encoded.includes(f)),
        `${needle} after ${before} bytes`,
      ).toBe(true);
    }
  });
});

describe('hostile input', () => {
  it.each([
    ['near-miss names', 'alice ace alicia acer '],
    ['runs of separators', 'Alice ' + ' '.repeat(200) + '\u00a0'.repeat(50)],
    ['at-sign spellings', 'alice=40=40%40&#64;[at]'],
    ['long local parts', 'a'.repeat(500) + '+' + '='.repeat(100) + '@'],
  ])('redacts a megabyte of %s in one pass and still finds the real mention at the end', (_what, filler) => {
    const long = filler.repeat(Math.ceil(1_000_000 / filler.length)) + ' Alice Ace <alice@alicecorp.example>';
    const r = text.redact(long);
    expect(r.value.endsWith(`${REDACTED_NAME} <${REDACTED_ADDRESS}>`)).toBe(true);
  });

  it('an identity with nothing to look for matches nothing', () => {
    const empty: ErasureNeedles = erasureNeedles({ addresses: [], names: [] });
    expect(new Redactor(empty, 'text').redact('anything at all')).toEqual({ value: 'anything at all', changed: false, strong: false });
    expect(searchPlan(empty).text).toEqual([]);
  });
});
