// Issue 30's recognisers, one rule at a time: Usenet "Name> " quotes and reply subjects
// (quote-prefix.ts), Mailman footers and device footers (footers.ts), SES notifications whose JSON
// a relay broke (provider-notification.ts), and the forwarded-bounce decision (gateway-notice.ts).
// The corpora (new-text-corpus, classify-corpus) hold the whole-mail cases; these pin the rules and
// their hostile inputs.
import { describe, expect, it } from 'vitest';
import { isDeviceFooter, isListFooterStart, isMobileFooter } from '../../src/mail/footers.ts';
import { headerBlockAt } from '../../src/mail/header-block.ts';
import { attributionStrength } from '../../src/mail/attribution.ts';
import { readProviderNotification } from '../../src/mail/provider-notification.ts';
import { isReplySubject, usenetQuotedLines } from '../../src/mail/quote-prefix.ts';
import { extractReplyText } from '../../src/mail/reply-text.ts';

const marks = (text: string): number[] => [...usenetQuotedLines(text.split('\n'))];

describe('Usenet "Name> " quotes', () => {
  it.each([
    ['two lines with the same prefix', 'Bob> one\nBob> two', [1, 1]],
    ['a blank line inside the run', 'Bob> one\n\nBob> two', [1, 0, 1]],
    ['initials', 'JD> one\nJD> two\nmine', [1, 1, 0]],
    ['a single prefixed line is text', 'Note> the meter is at the back\nThanks', [0, 0]],
    ['different prefixes do not make a run', 'Ann> one\nBob> two', [0, 0]],
    ['a confirmed prefix quotes its single lines later', 'Kim> a\nKim> b\nanswer\nKim> c\nanswer 2', [1, 1, 0, 1, 0]],
    ['">" with no space after is not a prefix', 'a>b\na>b', [0, 0]],
    ['digits first are not a name', '1> x\n1> y', [0, 0]],
  ])('%s', (_name, text, expected) => {
    expect(marks(text)).toEqual(expected);
  });

  it('stays linear on 200,000 prefixed lines', () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => (i % 3 === 2 ? 'answer' : `Bob${i % 7}> quoted text here`));
    const quoted = lines.filter((l) => l !== 'answer').length;
    // Runs of two need the same prefix; "Bob<n>" changes every line, so only the confirmed pairs count.
    expect(usenetQuotedLines(lines).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(quoted);
    const same = Array.from({ length: 200_000 }, (_, i) => (i % 3 === 2 ? 'answer' : 'Bob> quoted text here'));
    expect(usenetQuotedLines(same).reduce((a, b) => a + b, 0)).toBe(same.filter((l) => l !== 'answer').length);
  });
});

describe('reply subjects', () => {
  it.each(['Re: Order', 'RE: Order', 'AW: Bestellung', 'SV: Ordre', 'Odp: Zamówienie', 'Re[2]: Order', '回复：订单', 'Отв: Заказ'])(
    '%s is a reply',
    (subject) => expect(isReplySubject(subject)).toBe(true),
  );
  it.each(['Card payment declined', 'Fwd: Order', 'Regarding your order', 'Rechnung'])('%s is not', (subject) =>
    expect(isReplySubject(subject)).toBe(false),
  );
});

describe('mailing-list footers', () => {
  const at = (text: string, line = 0): boolean => isListFooterStart(text.split('\n'), line);
  it.each([
    ['two underscores then the list line', '__\nfoo mailing list\nfoo@lists.example'],
    ['Mailman 2 underscores', '_______________________________________________\nfoo-users mailing list'],
    ['all on one line', '__ foo-dev mailing list foo-dev@lists.example https://lists.example/listinfo/foo-dev'],
    ['address and URL on the list line', '___\nfoo mailing list foo@lists.example https://lists.example/listinfo/foo'],
    ['bare list line, address, URL', 'foo-users mailing list\nfoo-users@lists.example\nhttps://lists.example/mailman/listinfo/foo-users'],
    ['German', '___\nLindhof-Nutzer Mailingliste\nx@lists.example'],
  ])('%s', (_name, text) => expect(at(text)).toBe(true));

  it.each([
    ['a sentence about a list, then an address', 'Add me to the mailing list\njane@mail.example\nhttps://example.com'],
    ['two words before "mailing list" and only an address after', 'Join our mailing list\njane@mail.example'],
    ['underscores alone', '__\nThanks'],
  ])('not: %s', (_name, text) => expect(at(text)).toBe(false));
});

describe('device footers', () => {
  it.each(['Sent from my iPhone', 'Von meinem iPhone gesendet', 'Get Outlook for Android', 'iPhoneから送信', 'Sendt fra min iPhone'])(
    '%s is a device footer',
    (line) => expect(isDeviceFooter(line)).toBe(true),
  );
  it('an apology for brevity is a footer at the end, but not a device footer that cuts what follows', () => {
    expect(isMobileFooter('Sorry for the brevity.')).toBe(true);
    expect(isDeviceFooter('Sorry for the brevity.')).toBe(false);
    expect(extractReplyText({ text: 'On the road.\nSorry for the brevity.\nThe order number is 4471.', html: null })).toBe(
      'On the road.\nSorry for the brevity.\nThe order number is 4471.',
    );
  });
  it('cuts unquoted text below a device footer only when something was written above it', () => {
    expect(extractReplyText({ text: 'Yes.\n\nSent from my iPhone\n\nOld message text', html: null })).toBe('Yes.');
  });
  it('stays linear on 100,000 footer lines each followed by text', () => {
    const text = `Keep me.\n${'Sent from my iPhone\nold text\n'.repeat(50_000)}`;
    expect(extractReplyText({ text, html: null })).toBe('Keep me.');
  });
});

describe('attributions and header blocks of issue 30', () => {
  it.each([
    ['2013/7/20 sam via Forum <forum@example.com>', 'weak'],
    ['2025/3/4 たろう via さくらフォーラム <forum@sakura.example>', 'weak'],
    ['2016-03-03 17:21 GMT+01:00 Some One <some@example.com>:', 'strong'],
    ['tir. 18. apr. 2017 kl. 13:09 skrev Test User <test@example.com>:', 'strong'],
    ['Max Mustermann <max@example.de> schrieb am Fr., 28. Apr. 2017 um 10:15 Uhr:', 'strong'],
    ['2013/7/20 was the date. Mail me at <a@b.example>', null],
    ['Call me on 2025-03-04 <a@b.example>', null],
  ])('%s → %s', (line, strength) => expect(attributionStrength(line)).toBe(strength));

  it.each([
    ['==== Message du : 04/03/2025 10:15 De : "Jean" <jean@example.fr>\nA : moi@example.fr\nObjet : test', 3],
    ['Message du 04/03/25 10:15\nDe : "Jean" <jean@example.fr>\nA : moi@example.fr\nObjet : test', 4],
  ])('French webmail header block %#', (text, length) => {
    expect(headerBlockAt(text.split('\n'), 0)?.length).toBe(length);
  });
  it('"Message du" in a sentence is not a header', () => {
    expect(headerBlockAt(['Le message du 04/03/2025 est arrivé.', 'Merci'], 0)).toBeNull();
  });
});

describe('SES notifications a relay broke', () => {
  const notification = JSON.stringify({
    notificationType: 'Bounce',
    bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: [{ emailAddress: 'a@b.example', status: '5.1.1' }] },
    mail: { messageId: 'x', commonHeaders: { messageId: '<m1@acme.example>' } },
  });

  it('reads JSON broken by sendmail\'s 990-octet rule ("!\\n ")', () => {
    const broken = `${notification.slice(0, 60)}!\n ${notification.slice(60)}`;
    expect(readProviderNotification(broken)).toMatchObject({
      provider: 'amazon-ses',
      kind: 'bounce',
      failed: true,
      messageIds: ['<m1@acme.example>'],
    });
  });
  it('reads JSON hard-wrapped at a fixed width', () => {
    const wrapped = notification.match(/.{1,50}/g)!.join('\n');
    expect(readProviderNotification(wrapped)?.messageIds).toEqual(['<m1@acme.example>']);
  });
  it('recognises a cut-short notification by its shape', () => {
    const cut = `${notification.slice(0, notification.indexOf('"commonHeaders"'))}"x\n}`;
    expect(readProviderNotification(cut)).toMatchObject({ provider: 'amazon-ses', kind: 'bounce', failed: true, messageIds: [] });
  });
  it('a delivery delay is not a failure', () => {
    expect(readProviderNotification('{"eventType":"DeliveryDelay","mail":{"x":1},"deliveryDelay":{}}')).toMatchObject({ failed: false });
    // Cut short (unbalanced), recognised by its shape: still not a failure.
    expect(readProviderNotification('{"eventType":"DeliveryDelay","mail":{"x":1}')).toMatchObject({ kind: 'bounce', failed: false });
  });
  it('prose around the JSON is a person', () => {
    expect(readProviderNotification(`What is this?\n${notification}`)).toBeNull();
  });
});

describe('tracking marks', () => {
  it('drops a trailing "ᐧ" and stays linear on a long line of spaces', () => {
    expect(extractReplyText({ text: 'Thanks. ᐧ', html: null })).toBe('Thanks.');
    const text = `Keep${' '.repeat(500_000)}x ᐧ`;
    expect(extractReplyText({ text, html: null }).endsWith('x')).toBe(true);
  });
});

describe('list footers stay linear', () => {
  it('30,000 lines of 300 underscores', () => {
    const text = `Keep me.\n${`${'_'.repeat(298)}x\n`.repeat(30_000)}`;
    expect(extractReplyText({ text, html: null }).startsWith('Keep me.')).toBe(true);
  });
});
