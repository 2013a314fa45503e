import { describe, expect, it } from 'vitest';
import { repairHeaderSection, startsWithHeaderField } from '../../src/mail/header-repair.ts';
import { parseRawEmail } from '../../src/mail/parse-message.ts';

const MAIL =
  'From: Ana <ana@example.com>\r\nTo: support@acme.example\r\nSubject: Hello\r\nMessage-ID: <a@example.com>\r\n\r\nBody line one\r\nline two\r\n';
const repair = (text: string | Buffer) => repairHeaderSection(typeof text === 'string' ? Buffer.from(text, 'latin1') : text);

describe('lenient header repair', () => {
  it('leaves well-formed mail alone (same buffer, nothing recorded)', () => {
    const input = Buffer.from(MAIL);
    const result = repairHeaderSection(input);
    expect(result.raw).toBe(input);
    expect(result.repairs).toEqual([]);
    // Bare LF and mixed LF/CRLF are what mailparser reads anyway: not a repair.
    expect(repair(MAIL.replace(/\r\n/g, '\n')).repairs).toEqual([]);
    expect(repair(MAIL.replace('\r\nTo:', '\nTo:')).repairs).toEqual([]);
  });

  it.each([
    ['a line of spaces', `   \r\n${MAIL}`, ['1 blank or whitespace-only line before the headers removed']],
    ['blank and tab lines', `\r\n\t\r\n  \t \n${MAIL}`, ['3 blank or whitespace-only lines before the headers removed']],
    ['a UTF-8 byte-order mark', `\u00ef\u00bb\u00bf${MAIL}`, ['byte-order mark before the headers removed']],
    ['an mbox From_ line', `From ana@example.com Tue Dec  1 10:00:00 2026\n${MAIL}`, ['mbox "From " separator line removed']],
    ['indentation before the first header', `  ${MAIL}`, ['whitespace before the first header field removed']],
  ])('removes %s and records it', (_what, input, repairs) => {
    const result = repair(input);
    expect(result.repairs).toEqual(repairs);
    expect(result.raw.toString('latin1')).toBe(MAIL);
  });

  it('reads bare CR line ends as line breaks, in mixed line endings too, and counts them', () => {
    const bareCr = MAIL.replace(/\r\n/g, '\r');
    expect(repair(bareCr)).toEqual({ raw: Buffer.from(MAIL, 'latin1'), repairs: ['7 bare CR line ends read as line breaks'] });
    const mixed = 'From: a@b.example\rTo: c@d.example\nSubject: x\r\n\r\nbody\r';
    expect(repair(mixed)).toEqual({
      raw: Buffer.from('From: a@b.example\r\nTo: c@d.example\nSubject: x\r\n\r\nbody\r\n', 'latin1'),
      repairs: ['2 bare CR line ends read as line breaks'],
    });
  });

  it('combines repairs in the order they were made', () => {
    const result = repair(`\u00ef\u00bb\u00bf \r\n${MAIL.replace(/\r\n/g, '\r')}`);
    expect(result.repairs).toEqual([
      'byte-order mark before the headers removed',
      '1 blank or whitespace-only line before the headers removed',
      '7 bare CR line ends read as line breaks',
    ]);
    expect(result.raw.toString('latin1')).toBe(MAIL);
  });

  it('does not make garbage into headers: leading junk stays when no header field follows, and beyond the caps', () => {
    const garbage = Buffer.concat([Buffer.from('\r\n  \r\n'), Buffer.from([0xff, 0xfe, 0x00, 0x13, 0x80, 0x3a, 0x41])]);
    expect(startsWithHeaderField(repair(garbage).raw)).toBe(false);
    expect(startsWithHeaderField(repair(' \r\n \r\n').raw)).toBe(false);
    expect(startsWithHeaderField(repair(`${'\r\n'.repeat(150)}${MAIL}`).raw)).toBe(false);
    expect(startsWithHeaderField(repair(`${' '.repeat(9000)}\r\n${MAIL}`).raw)).toBe(false);
    // Two mbox lines are not a client's quirk.
    expect(startsWithHeaderField(repair(`From a@b Tue\nFrom c@d Wed\n${MAIL}`).raw)).toBe(false);
  });

  it('only touches the front: a "From " line in the body and blank lines later stay', () => {
    const mail = `${MAIL}\r\nFrom the desk of Ana\r\n\r\n\r\n`;
    expect(repair(mail).repairs).toEqual([]);
  });

  it('handles a large message with many bare CRs in one linear pass', () => {
    const body = 'x'.repeat(70).concat('\r').repeat(100_000);
    const result = repair(`From: a@b.example\r\nSubject: big\r\n\r\n${body}`);
    expect(result.repairs).toEqual(['100000 bare CR line ends read as line breaks']);
    expect(result.raw.length).toBe('From: a@b.example\r\nSubject: big\r\n\r\n'.length + body.length + 100_000);
  });

  it('lets the parser read repaired mail and keeps what was repaired on the parsed mail', async () => {
    const parsed = await parseRawEmail(Buffer.from(`  \r\n${MAIL.replace(/\r\n/g, '\r')}`, 'latin1'));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.email.from?.address).toBe('ana@example.com');
    expect(parsed.email.subject).toBe('Hello');
    expect(parsed.email.textPart).toBe('Body line one\nline two\n');
    expect(parsed.email.repairs).toEqual([
      '1 blank or whitespace-only line before the headers removed',
      '7 bare CR line ends read as line breaks',
    ]);
    expect(await parseRawEmail(Buffer.from('\r\n\r\n\u0000\u0001binary'))).toEqual({ ok: false, reason: 'no RFC 5322 header section' });
  });
});
