import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { erasureNeedles } from '../../src/mail/erasure-patterns.ts';
import { parseRawEmail } from '../../src/mail/parse-message.ts';
import {
  ERASURE_HEADER,
  eraseFromOriginal,
  MAX_REWRITE_BYTES,
  type ErasedOriginalSource,
  type RawOutcome,
} from '../../src/mail/raw-redaction.ts';

const needles = erasureNeedles({ addresses: ['alice@alicecorp.example'], names: ['Alice Ace', 'Zoë Ünal'] });
const source: ErasedOriginalSource = {
  messageId: '<bob-1@bobco.example>',
  fromAddress: 'bob@bobco.example',
  fromName: 'Bob Builder',
  to: ['support@acme.example'],
  cc: ['erased@erased.invalid'],
  subject: 'About [erased]',
  date: new Date('2026-11-20T10:00:00Z'),
  inReplyTo: null,
  references: [],
  bodyText: 'Redacted text as stored.',
};

const b64 = (text: string, charset: BufferEncoding = 'utf8') =>
  Buffer.from(text, charset)
    .toString('base64')
    .replace(/.{1,76}/g, '$&\r\n')
    .trimEnd();
const word = (text: string) => `=?utf-8?B?${Buffer.from(text).toString('base64')}?=`;

function message(headers: string[], body: string[], contentType = 'multipart/mixed; boundary="b1"'): Buffer {
  return Buffer.from(
    [
      'From: Bob Builder <bob@bobco.example>',
      'To: support@acme.example',
      'Message-ID: <bob-1@bobco.example>',
      'Date: Fri, 20 Nov 2026 10:00:00 +0000',
      'MIME-Version: 1.0',
      ...headers,
      `Content-Type: ${contentType}`,
      '',
      ...body,
      '',
    ].join('\r\n'),
    'latin1',
  );
}

const part = (headers: string[], body: string) => ['--b1', ...headers, '', body];

/** Everything a reader of the stored original could see, decoded: headers, text, html, text attachments. */
async function visible(raw: Buffer): Promise<string> {
  const parsed = await parseRawEmail(raw);
  if (!parsed.ok) return raw.toString('latin1');
  const e = parsed.email;
  const people = [e.from, ...e.to, ...e.cc, ...e.replyTo].map((a) => `${a?.name ?? ''} <${a?.address ?? ''}>`);
  return [
    e.subject,
    ...people,
    e.textPart ?? '',
    e.html ?? '',
    e.bodyText,
    ...e.attachments.map((a) => a.filename ?? ''),
    raw.toString('latin1'),
  ].join('\n');
}

const MENTIONS = /alice ?ace|alice(@|=40|%40)|zo(ë|e)\s?(ü|u)nal|QWxpY2UgQWNl|YWxpY2VAYWxpY2Vjb3Jw/i;

async function erase(raw: Buffer, mentioned = false): Promise<RawOutcome> {
  return eraseFromOriginal(raw, needles, mentioned, source);
}

async function expectRedacted(raw: Buffer): Promise<Buffer> {
  expect(await visible(raw)).toMatch(MENTIONS);
  const outcome = await erase(raw);
  expect(outcome.kind).toBe('redacted');
  const out = outcome.kind === 'redacted' ? outcome.raw : Buffer.alloc(0);
  expect(await visible(out)).not.toMatch(MENTIONS);
  expect((await parseRawEmail(out)).ok).toBe(true);
  return out;
}

describe('rewriting a stored original', () => {
  it('a base64 text part is decoded, redacted and encoded again', async () => {
    const raw = message(
      [],
      [
        ...part(
          ['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64'],
          b64('Hi, this is Alice Ace <alice@alicecorp.example>. Alice says hi.\r\n'),
        ),
        '--b1--',
      ],
    );
    const out = await expectRedacted(raw);
    const parsed = await parseRawEmail(out);
    expect(parsed.ok && parsed.email.bodyText.trim()).toBe('Hi, this is [erased] <erased@erased.invalid>. [erased] says hi.');
    expect(out.toString('latin1')).toMatch(/Content-Transfer-Encoding: base64/);
  });

  it('RFC 2047 encoded-words in From, Cc and Subject, B and Q, split over two words, ISO-8859-1', async () => {
    const raw = message(
      [
        `Cc: ${word('Alice Ace')} <Alice@AliceCorp.Example>, =?iso-8859-1?Q?Zo=EB_=DCnal?= <zoe@elsewhere.example>`,
        'Subject: =?utf-8?Q?About_Alice?= =?utf-8?Q?_Ace=E2=80=99s_invoice?=',
        `Reply-To: "${word('ALICE ACE')}" <bob@bobco.example>`,
      ],
      ['Plain body.'],
      'text/plain; charset=utf-8',
    );
    const out = await expectRedacted(raw);
    const parsed = await parseRawEmail(out);
    expect(parsed.ok && parsed.email.subject).toBe('About [erased]’s invoice');
    expect(parsed.ok && parsed.email.cc.map((a) => a.address)).toEqual(['erased@erased.invalid', 'zoe@elsewhere.example']);
  });

  it('quoted-printable: an address broken by a soft line break, =40, and a name', async () => {
    const raw = message(
      [],
      [
        ...part(
          ['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable'],
          'Write to ali=\r\nce@alicecorp.example or alice=3D40? no: Alice A=\r\nce, Zo=C3=AB =C3=9Cnal.',
        ),
        '--b1--',
      ],
    );
    await expectRedacted(raw);
  });

  it('an HTML part in base64 with entities and a mailto link', async () => {
    const html = '<p>Forwarding for Alice&nbsp;Ace: <a href="mailto:alice%40alicecorp.example">alice&#64;alicecorp.example</a></p>';
    const raw = message(
      [],
      [...part(['Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: base64'], b64(html)), '--b1--'],
    );
    await expectRedacted(raw);
  });

  it('a forwarded message attached as base64 message/rfc822 is redacted inside', async () => {
    const inner = [
      'From: Alice Ace <alice@alicecorp.example>',
      'Subject: my invoice',
      'Content-Type: text/plain',
      '',
      'Hello, Alice here.',
      '',
    ].join('\r\n');
    const raw = message(
      [],
      [
        ...part(['Content-Type: text/plain'], 'See the forwarded mail.'),
        ...part(['Content-Type: message/rfc822', 'Content-Transfer-Encoding: base64', 'Content-Disposition: attachment'], b64(inner)),
        '--b1--',
      ],
    );
    const out = await expectRedacted(raw);
    const attached = /Content-Transfer-Encoding: base64\r\nContent-Disposition: attachment\r\n\r\n([A-Za-z0-9+/=\r\n]+)/.exec(
      out.toString('latin1'),
    );
    expect(Buffer.from(attached?.[1] ?? '', 'base64').toString()).toMatch(
      /From: \[erased\] <erased@erased\.invalid>[\s\S]*\[erased\] here/,
    );
  });

  it('an inline message/rfc822 (7bit) is redacted through its own headers', async () => {
    const raw = message(
      [],
      [
        ...part(
          ['Content-Type: message/rfc822', 'Content-Disposition: inline'],
          `From: ${word('Alice Ace')} <alice@alicecorp.example>\r\nSubject: hi\r\n\r\nAlice Ace here.`,
        ),
        '--b1--',
      ],
    );
    await expectRedacted(raw);
  });

  it('an ISO-8859-1 8bit part and an RFC 2231 file name', async () => {
    const raw = message(
      [],
      [
        ...part(['Content-Type: text/plain; charset=iso-8859-1', 'Content-Transfer-Encoding: 8bit'], 'Gr\xfc\xdfe von Zo\xeb \xdcnal'),
        ...part(
          [
            "Content-Type: text/plain; name*=utf-8''Zo%C3%AB%20%C3%9Cnal.txt",
            'Content-Transfer-Encoding: base64',
            'Content-Disposition: attachment',
          ],
          b64('notes'),
        ),
        '--b1--',
      ],
    );
    await expectRedacted(raw);
  });

  it('a binary attachment that names the customer is emptied; the rest of the message stays', async () => {
    const raw = message(
      [],
      [
        ...part(['Content-Type: text/plain'], 'Invoice attached.'),
        ...part(
          ['Content-Type: application/pdf; name="invoice.pdf"', 'Content-Transfer-Encoding: base64'],
          b64('%PDF-1.4 (Billed to: Alice Ace) ...'),
        ),
        '--b1--',
      ],
    );
    const outcome = await erase(raw);
    expect(outcome).toMatchObject({ kind: 'redacted', partsEmptied: 1 });
    const parsed = await parseRawEmail(outcome.kind === 'redacted' ? outcome.raw : raw);
    expect(parsed.ok && parsed.email.bodyText.trim()).toBe('Invoice attached.');
    expect(parsed.ok && parsed.email.attachments.map((a) => [a.filename, a.size])).toEqual([['invoice.pdf', 0]]);
  });

  it('given names go too once the message mentions the customer, even when only its columns did', async () => {
    const raw = message([], [...part(['Content-Type: text/plain'], 'Alice asked us to call back.'), '--b1--']);
    expect((await erase(raw, false)).kind).toBe('unchanged');
    const outcome = await erase(raw, true);
    expect(outcome.kind).toBe('redacted');
    expect(outcome.kind === 'redacted' && outcome.raw.toString()).toMatch(/\[erased\] asked us/);
  });

  it('a charset the byte search cannot read (UTF-16) is replaced by a re-rendering of the stored columns', async () => {
    const raw = message(
      [],
      [
        ...part(
          ['Content-Type: text/plain; charset=utf-16le', 'Content-Transfer-Encoding: base64'],
          b64('From Alice Ace, thanks', 'utf16le'),
        ),
        '--b1--',
      ],
    );
    expect(await visible(raw)).toMatch(/Alice Ace/);
    const outcome = await erase(raw);
    expect(outcome.kind).toBe('replaced');
    const out = outcome.kind === 'replaced' ? outcome.raw : Buffer.alloc(0);
    expect(out.toString()).toMatch(
      new RegExp(`${ERASURE_HEADER}: original replaced: the text still mentioned the\\s+customer after rewriting`),
    );
    const parsed = await parseRawEmail(out);
    expect(parsed.ok && [parsed.email.messageId, parsed.email.subject, parsed.email.bodyText.trim()]).toEqual([
      '<bob-1@bobco.example>',
      'About [erased]',
      'Redacted text as stored.',
    ]);
  });

  it('bytes that are not a message at all are redacted as bytes, or replaced when a base64 spelling remains', async () => {
    const plain = await erase(Buffer.from('\x00\x01 garbage from Alice@AliceCorp.example'));
    expect(plain.kind === 'redacted' && plain.raw.toString('latin1')).toBe('\x00\x01 garbage from erased@erased.invalid');
    expect(await erase(Buffer.from(`\x00\x01 garbage ${Buffer.from('from Alice Ace').toString('base64')}`))).toMatchObject({
      kind: 'replaced',
    });
  });

  it('originals above the size cap are replaced without being parsed', async () => {
    const huge = Buffer.alloc(MAX_REWRITE_BYTES + 1, 0x61);
    expect(await erase(huge)).toMatchObject({ kind: 'replaced', reason: 'too large to rewrite' });
  });

  it('leaves every fixture of the corpus byte for byte as it was when it does not mention the customer', async () => {
    const dir = path.resolve(import.meta.dirname, '../../fixtures/emails/corpus');
    const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
    expect(files.length).toBeGreaterThan(50);
    const stranger = erasureNeedles({ addresses: ['nobody@nowhere.example'], names: ['Qwerty Uiop'] });
    for (const file of files) {
      const raw = readFileSync(path.join(dir, file));
      expect(await eraseFromOriginal(raw, stranger, true, source), file).toEqual({ kind: 'unchanged' });
    }
  });

  it('a corpus customer is erased from every fixture that mentions them, and the rest parse the same', async () => {
    const dir = path.resolve(import.meta.dirname, '../../fixtures/emails/corpus');
    const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
    const raws = files.map((f) => readFileSync(path.join(dir, f)));
    const first = await parseRawEmail(raws[0]!);
    const from = first.ok ? first.email.from : null;
    expect(from?.address).toBeTruthy();
    const target = erasureNeedles({ addresses: [from!.address!], names: [from!.name] });
    let touched = 0;
    for (const [i, raw] of raws.entries()) {
      const outcome = await eraseFromOriginal(raw, target, false, source);
      if (outcome.kind === 'unchanged') continue;
      touched++;
      const text = (await visible(outcome.raw)).toLowerCase();
      expect(text, files[i]).not.toContain(from!.address!);
    }
    expect(touched).toBeGreaterThan(0);
  });
});
