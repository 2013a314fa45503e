import { describe, expect, it } from 'vitest';
import { isForwardSubject, normaliseSubject, replySubject, sanitiseHeaderValue } from '../../src/mail/subject.ts';

describe('subject normalisation', () => {
  it.each([
    ['Re: RE[2]: Fwd: Invoice #4471', 'invoice #4471'],
    ['AW: WG: SV: VS: Antw: Lieferung', 'lieferung'],
    ['Réf: TR: Commande', 'commande'],
    ['回复: 转发: 答复：发票问题', '发票问题'],
    ['[ACME] Re: [ticket] Password reset', 'password reset'],
    ['Re(3):   Shipping    delay', 'shipping delay'],
    ['Regarding the refund', 'regarding the refund'],
    ['', ''],
  ])('%j becomes %j', (subject, expected) => {
    expect(normaliseSubject(subject)).toBe(expected);
  });

  it('keeps at most 300 characters, whole code points, so the database can index it', () => {
    const long = 'Re: ' + '发票'.repeat(400) + '😀'.repeat(10);
    const normalised = normaliseSubject(long);
    expect([...normalised]).toHaveLength(300);
    expect(Buffer.byteLength(normalised)).toBeLessThanOrEqual(1200);
    expect(normaliseSubject(long.replace('Re: ', 'AW: '))).toBe(normalised);
    expect(normaliseSubject('x'.repeat(299) + ' 😀😀')).toBe('x'.repeat(299));
  });

  it('recognises forwards under reply prefixes and list tags', () => {
    expect(isForwardSubject('Fwd: Invoice')).toBe(true);
    expect(isForwardSubject('[ACME] WG: Rechnung')).toBe(true);
    expect(isForwardSubject('Re: FW: Invoice')).toBe(true);
    expect(isForwardSubject('Re: Invoice')).toBe(false);
    expect(isForwardSubject('Forward planning')).toBe(false);
  });

  it('builds reply subjects without stacking prefixes', () => {
    expect(replySubject('Re: RE: AW: Invoice')).toBe('Re: Invoice');
    expect(replySubject('Invoice')).toBe('Re: Invoice');
    expect(replySubject('')).toBe('Re: your message');
  });

  it('never lets CR or LF into a header value', () => {
    expect(replySubject('Help\r\nBcc: attacker@evil.example')).toBe('Re: Help Bcc: attacker@evil.example');
    expect(sanitiseHeaderValue('a\u0000b\nc')).toBe('a b c');
  });
});
