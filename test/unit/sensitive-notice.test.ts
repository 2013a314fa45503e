import { describe, expect, it } from 'vitest';
import { OfflineProvider } from '../../src/llm/offline-provider.ts';
import { missingNotices, withSensitiveNotice } from '../../src/llm/sensitive-notice.ts';
import { createLogger } from '../../src/logger.ts';
import { maskText } from '../../src/mail/sensitive-values.ts';
import { assembleTurnContext } from '../../src/memory/context.ts';
import { sensitiveKindsOf, sensitiveNote } from '../../src/memory/sensitive-note.ts';

const email = (text: string, attachmentText = '') => ({
  messageId: '<m@x>',
  fromName: 'Alice Okafor',
  fromAddress: 'alice@example.com',
  date: new Date('2026-11-02T09:00:00Z'),
  text: maskText(text),
  attachmentText: maskText(attachmentText),
});

describe('the prompt note next to an email whose values were masked', () => {
  it.each([
    ['a card', 'card 4242 4242 4242 4242', ['card'], /payment card number.*not to send card numbers/],
    ['a card and its CVV', 'card 4242424242424242 CVV: 123', ['card', 'cvv'], /security code \(CVV\)/],
    ['an IBAN only: masked, no warning to send', 'IBAN DE89370400440532013000', ['iban'], /^(?!.*not to send).*IBAN/],
    ['a password', 'Passwort: Sommer2024!', ['password'], /change a password they sent/],
    ['a one-time code', 'OTP: 123456', ['one-time-code'], /never to share passwords or codes/],
    ['a national ID', 'SSN 078-05-1120', ['national-id'], /national identification number/],
  ])('%s', (_name, text, kinds, note) => {
    expect(sensitiveKindsOf(email(text))).toEqual(kinds);
    expect(sensitiveNote(sensitiveKindsOf(email(text)))).toMatch(note);
  });

  it('reads the attachments too, and says nothing when nothing was masked', () => {
    expect(sensitiveKindsOf(email('see attached', 'Card: 5555 5555 5555 4444'))).toEqual(['card']);
    expect(sensitiveNote(sensitiveKindsOf(email('order 4242424242424241')))).toBeNull();
  });

  it('stands right after the email in the prompt, outside its markers', () => {
    const prompt = assembleTurnContext({
      supportName: 'Acme Support',
      supportAddress: 'support@acme.example',
      profile: null,
      withheldReason: null,
      thread: { subject: 'Card', summary: '', openItems: [], currentIntent: '', tags: [], pinnedItems: [], status: 'open' },
      buffer: [],
      emails: [email('My card is 4242 4242 4242 4242, please fix the charge.')],
      now: new Date('2026-11-02T10:00:00Z'),
      limits: { promptTokenBudget: 4000, summaryTokenCap: 300, messageTokenCap: 1200, bufferTokenCap: 0 },
    });
    expect(prompt.user).toMatch(
      /My card is \[card •••• 4242\], please fix the charge\.\n<<<end email \w+>>>\nNOTE: the customer sent a payment card number/,
    );
    expect(prompt.user).not.toContain('4242 4242 4242 4242');
  });
});

describe('the reply sentence when card details or credentials were sent', () => {
  const draft = 'Hello Alice,\n\nThank you, we will look into the double charge.\n\nBest regards,\nAcme Support';

  it.each([
    ['English', 'My card is 4242 4242 4242 4242, it was charged twice.', /please never send card numbers or security codes by email/],
    [
      'German',
      'Meine Karte 4242 4242 4242 4242 wurde doppelt belastet, bitte prüfen.',
      /niemals Kartennummern oder Sicherheitscodes per E-Mail/,
    ],
    ['French', 'Ma carte 4242424242424242 a été débitée deux fois, merci de vérifier pour moi.', /n’envoyez jamais de numéro de carte/],
    ['Spanish', 'Hola, mi tarjeta 4242424242424242 fue cobrada dos veces, gracias por la ayuda.', /no envíe nunca números de tarjeta/],
    ['Japanese', 'カード番号 4242 4242 4242 4242 で二重に請求されました。', /カード番号やセキュリティコードをメールで送らないでください/],
    ['a CVV alone', 'The CVV is 123 if you need it.', /never send card numbers/],
  ])('%s: added before the sign-off', (_name, text, notice) => {
    const body = withSensitiveNotice(draft, [email(text)]);
    expect(body).toMatch(notice);
    expect(body.endsWith('\n\nBest regards,\nAcme Support')).toBe(true);
    expect(body.startsWith('Hello Alice,\n\nThank you, we will look into the double charge.\n\n')).toBe(true);
  });

  it('adds the credentials sentence for a password or a code', () => {
    expect(withSensitiveNotice(draft, [email('my password is Hunter2! and it fails')])).toContain('change the password you sent');
    expect(withSensitiveNotice(draft, [email('OTP: 123456')])).toContain('never share passwords or codes by email');
  });

  it('adds nothing when the draft already says it, or nothing needs saying', () => {
    const told = 'Hello,\n\nPlease do not send your card number by email again.\n\nBest regards,\nAcme';
    expect(withSensitiveNotice(told, [email('card 4242424242424242')])).toBe(told);
    expect(missingNotices(draft, [email('IBAN DE89370400440532013000 for the refund')])).toEqual([]);
    expect(withSensitiveNotice(draft, [email('order 4242424242424241')])).toBe(draft);
  });

  it('appends at the end of a draft without a sign-off paragraph', () => {
    expect(withSensitiveNotice('Thanks, checking now.', [email('card 4242424242424242')])).toBe(
      'Thanks, checking now.\n\nFor your security, please never send card numbers or security codes by email; we have hidden the card details you sent.',
    );
  });

  it('is said by the offline provider itself', async () => {
    const answer = await new OfflineProvider().messageTurn({
      prompt: { system: 's', user: 'u' },
      thread: { subject: 'Charge', summary: '', openItems: [], currentIntent: '', tags: [], pinnedItems: [], status: 'open' },
      profile: null,
      emails: [email('Hi, my card 4242 4242 4242 4242 was charged twice. Can you check it?')],
      supportName: 'Acme Support',
      summaryTokenCap: 100,
    });
    if (!answer.ok) throw new Error('offline provider failed');
    expect(answer.value.reply.body).toContain('please never send card numbers or security codes by email');
    expect(JSON.stringify(answer.value)).not.toContain('4242 4242 4242 4242');
  });
});

describe('log lines', () => {
  it('carry no sensitive value, in the message, the fields or an error', () => {
    const lines: string[] = [];
    const logger = createLogger('test', { level: 'trace', write: (line) => lines.push(line) });
    logger.info('customer wrote 4242 4242 4242 4242', {
      body: 'IBAN DE89 3704 0044 0532 0130 00, Passwort: Sommer2024!',
      nested: { list: ['CVV: 123', 'SSN 078-05-1120'] },
      error: new Error('declined card 5555555555554444'),
      order: 'order 4242424242424241',
      count: 4242424242424242,
    });
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(JSON.parse(line)).toMatchObject({
      message: 'customer wrote [card •••• 4242]',
      body: 'IBAN [iban •••• 3000], Passwort: [password]',
      nested: { list: ['CVV: [cvv]', 'SSN [national id]'] },
      error: { message: 'declined card [card •••• 4444]' },
      order: 'order 4242424242424241',
      count: '[card •••• 4242]',
    });
    for (const raw of ['4242 4242 4242 4242', 'DE89', 'Sommer2024', '078-05-1120', '5555555555554444', 'CVV: 123'])
      expect(line).not.toContain(raw);
  });
});
