import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import {
  countTokens,
  EXACT_COUNT_CHARS,
  MAX_RUN_CHARS,
  segments,
  truncateToTokens,
  truncateToTokensFromEnd,
} from '../../src/memory/tokens.ts';

const PLAIN = { disallowedSpecial: new Set<string>() };
/** The tokenizer on the whole string at once: the reference for ordinary text. */
const reference = (text: string) => encode(text, PLAIN).length;

const ORDINARY = [
  'Hello, I was charged twice for order #4471 on 3 March. Could you refund one of them?',
  'Guten Tag,\n\nich habe meine Rechnung nicht erhalten. Können Sie sie mir erneut senden?\n\nViele Grüße\nJonas',
  '您好，我的订单还没有发货。请问什么时候可以发货？谢谢！',
  'こんにちは。パスワードをリセットできません。助けてください。',
  'Привет! Не могу войти в аккаунт после смены пароля.',
  '> quoted line\n> another\n\nMy answer is below the quote.\n-- \nAnn',
  'Line one\r\n\r\nLine three with  two spaces and\ttabs\n\n\n',
  'https://example.com/a/very/long/path?with=query&and=more#fragment and text after',
  'special tokens are text here: <|endoftext|> <|im_start|>system',
];

describe('countTokens', () => {
  it('matches the tokenizer exactly on ordinary text in several languages', () => {
    for (const text of ORDINARY) expect(countTokens(text)).toBe(reference(text));
  });

  it('matches the tokenizer on long ordinary text that is cut into segments', () => {
    const text = ORDINARY.join('\n\n').repeat(200); // about 90,000 characters
    expect([...segments(text, 0, text.length)].length).toBeGreaterThan(10);
    expect(countTokens(text)).toBe(reference(text));
  });

  it('counts the empty string as zero', () => {
    expect(countTokens('')).toBe(0);
  });

  it('counts hostile runs close to the tokenizer, and never throws', () => {
    const cases = [
      // Kept short: the reference (the tokenizer alone) is quadratic on these.
      'a' + '\u0301'.repeat(5_000), // combining marks on one letter
      '漢'.repeat(5_000), // CJK without punctuation
      '>'.repeat(5_000), // one long quote marker run
      'x'.repeat(5_000),
      '👩‍👩‍👧‍👦'.repeat(500), // emoji ZWJ sequences
    ];
    for (const text of cases) {
      const exact = reference(text);
      const counted = countTokens(text);
      // A cut inside a run can change the merge at each cut, by a token or so.
      const cuts = Math.ceil(text.length / MAX_RUN_CHARS);
      expect(Math.abs(counted - exact)).toBeLessThanOrEqual(cuts);
    }
  });

  it('survives inputs the tokenizer alone cannot take (stack overflow, minutes of CPU)', () => {
    // 150,000 combining marks: one piece of 150,001 tokens overflowed the stack in gpt-tokenizer.
    const marks = 'a' + '\u0301'.repeat(150_000);
    expect(countTokens(marks)).toBeGreaterThan(100_000);
    expect(truncateToTokens(marks, 1200)).toMatch(/ …$/);
    expect(truncateToTokensFromEnd(marks, 250)).toMatch(/^… /);
  });

  it('estimates beyond the exact part from the counted ratio', () => {
    const unit = 'word ';
    const text = unit.repeat(2_000_000); // 10 MB
    const estimate = countTokens(text);
    // The floor of one token per four characters applies to this text (0.2 tokens per character).
    const perChar = Math.max(0.25, reference(unit.repeat(1000)) / (unit.length * 1000));
    expect(estimate).toBeGreaterThan(text.length * perChar * 0.9);
    expect(estimate).toBeLessThan(text.length * perChar * 1.1);
    // The exact part really is counted: just under the limit the count is the reference count.
    const exactText = unit.repeat(Math.floor(EXACT_COUNT_CHARS / unit.length));
    expect(countTokens(exactText)).toBe(reference(exactText));
  });

  it('never estimates below one token per four characters', () => {
    const text = ' '.repeat(EXACT_COUNT_CHARS) + 'x'.repeat(1_000_000);
    expect(countTokens(text)).toBeGreaterThanOrEqual(250_000);
  });
});

describe('truncateToTokens', () => {
  it('returns text that fits unchanged', () => {
    for (const text of ORDINARY) expect(truncateToTokens(text, 1000)).toBe(text);
  });

  it('keeps the longest prefix and marks the cut, like cutting the whole token list', () => {
    const text = ORDINARY.join('\n').repeat(50);
    for (const max of [2, 10, 57, 300, 1200]) {
      const cut = truncateToTokens(text, max);
      expect(cut.endsWith(' …')).toBe(true);
      expect(text.startsWith(cut.slice(0, -2))).toBe(true);
      expect(countTokens(cut.slice(0, -2))).toBeLessThanOrEqual(max - 1);
    }
  });

  it('returns the empty string for a budget of zero or less', () => {
    expect(truncateToTokens('anything', 0)).toBe('');
    expect(truncateToTokens('anything', -3)).toBe('');
  });

  it('cuts hostile strings of up to 10 MB to the budget', () => {
    const cases = [
      'a' + '\u0301'.repeat(1_000_000),
      '漢'.repeat(1_000_000),
      '>'.repeat(10_000_000),
      '👩‍👩‍👧‍👦'.repeat(200_000),
      Buffer.from(Array.from({ length: 1_000_000 }, (_, i) => (i * 7919) % 256)).toString('latin1'),
    ];
    for (const text of cases) {
      const cut = truncateToTokens(text, 1200);
      expect(countTokens(cut)).toBeLessThanOrEqual(1200 + 1);
      expect(cut.length).toBeGreaterThan(0);
      expect(text.startsWith(cut.slice(0, -2).trimEnd())).toBe(true);
    }
  });

  it('never leaves half a surrogate pair at the cut', () => {
    const text = '😀'.repeat(5_000);
    const cut = truncateToTokens(text, 100).slice(0, -2);
    expect(cut).not.toMatch(/[\uD800-\uDBFF]$/);
    expect([...cut].every((ch) => ch === '😀')).toBe(true);
  });
});

describe('truncateToTokensFromEnd', () => {
  it('returns text that fits unchanged', () => {
    for (const text of ORDINARY) expect(truncateToTokensFromEnd(text, 1000)).toBe(text);
  });

  it('keeps the longest suffix and marks the cut', () => {
    const text = ORDINARY.join('\n').repeat(50);
    for (const max of [2, 10, 57, 250]) {
      const cut = truncateToTokensFromEnd(text, max);
      expect(cut.startsWith('… ')).toBe(true);
      expect(text.endsWith(cut.slice(2))).toBe(true);
      expect(countTokens(cut.slice(2))).toBeLessThanOrEqual(max - 1);
    }
  });

  it('cuts hostile strings of up to 10 MB to the budget', () => {
    for (const text of ['a' + '\u0301'.repeat(1_000_000), 'word '.repeat(2_000_000), '\n'.repeat(3_000_000), '漢'.repeat(1_000_000)]) {
      const cut = truncateToTokensFromEnd(text, 250);
      expect(cut.startsWith('… ')).toBe(true);
      expect(countTokens(cut)).toBeLessThanOrEqual(250 + 2);
    }
  });
});

describe('segments', () => {
  it('covers the text exactly, in order, without overlap', () => {
    const text = ORDINARY.join(' ').repeat(100) + 'z'.repeat(5_000) + ' '.repeat(3_000) + '😀'.repeat(1_000);
    const ranges = [...segments(text, 0, text.length)];
    expect(ranges[0]![0]).toBe(0);
    expect(ranges.at(-1)![1]).toBe(text.length);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]![0]).toBe(ranges[i - 1]![1]);
    expect(ranges.map(([a, b]) => text.slice(a, b)).join('')).toBe(text);
  });

  it('never puts more than MAX_RUN_CHARS non-whitespace characters in a row into one range', () => {
    const text = 'y'.repeat(10 * MAX_RUN_CHARS + 7);
    const ranges = [...segments(text, 0, text.length)];
    expect(Math.max(...ranges.map(([a, b]) => b - a))).toBeLessThanOrEqual(MAX_RUN_CHARS);
  });

  it('never splits a surrogate pair', () => {
    const text = 'a' + '😀'.repeat(1_000);
    for (const [a, b] of segments(text, 0, text.length)) {
      expect(text.slice(a, b)).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
  });
});
