import { describe, expect, it } from 'vitest';
import {
  isCardNumber,
  isCodiceFiscale,
  isDutchBsn,
  isGermanTaxId,
  isIban,
  isSpanishId,
  isSwedishPersonnummer,
  isUkNino,
  isUsSsn,
  luhnValid,
} from '../../src/mail/sensitive-checks.ts';
import { holdsSensitive, maskedKindsIn, maskSensitive, maskText } from '../../src/mail/sensitive-values.ts';

// Public test numbers of the card networks (Stripe's, Adyen's and the brands' own documentation).
const VALID_CARDS: Array<[string, string]> = [
  ['Visa', '4242424242424242'],
  ['Visa', '4111111111111111'],
  ['Visa', '4012888888881881'],
  ['Visa 13 digits', '4222222222222'],
  ['Visa debit', '4000056655665556'],
  ['Mastercard', '5555555555554444'],
  ['Mastercard', '5105105105105100'],
  ['Mastercard 2-series', '2223003122003222'],
  ['Amex', '378282246310005'],
  ['Amex', '371449635398431'],
  ['Discover', '6011111111111117'],
  ['Discover', '6011000990139424'],
  ['Diners 14 digits', '30569309025904'],
  ['Diners', '38520000023237'],
  ['JCB', '3530111333300000'],
  ['JCB', '3566002020360505'],
  ['UnionPay', '6200000000000005'],
  ['UnionPay 19 digits', '6205500000000000004'],
  ['Maestro', '6759649826438453'],
];

describe('checksums', () => {
  it.each(VALID_CARDS)('%s %s passes Luhn and its issuer range', (_brand, digits) => {
    expect(luhnValid(digits)).toBe(true);
    expect(isCardNumber(digits)).toBe(true);
  });

  it.each([
    ['Luhn fails', '4242424242424241'],
    ['Luhn fails (Amex)', '378282246310006'],
    ['no brand starts with 1 (a millisecond time)', '1765000000002'],
    ['no brand starts with 9', '9400111899223197'],
    ['no brand starts with 7', '7000000000000007'],
    ['too short', '424242424242'],
    ['Amex range at 16 digits', '3782822463100052'],
    ['Mastercard 2-series outside 2221-2720', '2800000000000006'],
  ])('%s: %s is no card', (_why, digits) => {
    expect(isCardNumber(digits)).toBe(false);
  });

  it.each([
    'DE89370400440532013000',
    'GB82WEST12345698765432',
    'FR1420041010050500013M02606',
    'ES9121000418450200051332',
    'NL91ABNA0417164300',
    'BE68539007547034',
    'IT60X0542811101000000123456',
    'CH9300762011623852957',
    'AT611904300234573201',
    'SE4550000000058398257466',
    'NO9386011117947',
    'PL61109010140000071219812874',
    'PT50000201231234567890154',
    'IE29AIBK93115212345678',
    'DK5000400440116243',
    'FI2112345600000785',
    'LU280019400644750000',
    'SA0380000000608010167519',
    'BR1800360305000010009795493C1',
    'MT84MALT011000012345MTLCAST001S',
  ])('IBAN %s passes mod-97 at its country length', (iban) => {
    expect(isIban(iban)).toBe(true);
  });

  it.each([
    ['a changed digit', 'DE89370400440532013001'],
    ['swapped digits', 'DE89370400440532031000'],
    ['the wrong length for its country', 'DE8937040044053201300'],
    ['an unknown country', 'XX89370400440532013000'],
  ])('no IBAN: %s (%s)', (_why, iban) => {
    expect(isIban(iban)).toBe(false);
  });

  it.each([
    [isUsSsn, '078051120', true],
    [isUsSsn, '123456789', true],
    [isUsSsn, '000123456', false],
    [isUsSsn, '666123456', false],
    [isUsSsn, '912345678', false],
    [isUsSsn, '123004567', false],
    [isUsSsn, '123450000', false],
    [isUkNino, 'AB123456C', true],
    [isUkNino, 'QQ123456C', false],
    [isUkNino, 'GB123456A', false],
    [isUkNino, 'AO123456A', false],
    [isUkNino, 'AB123456E', false],
    [isDutchBsn, '111222333', true],
    [isDutchBsn, '123456782', true],
    [isDutchBsn, '123456789', false],
    [isSpanishId, '12345678Z', true],
    [isSpanishId, 'X1234567L', true],
    [isSpanishId, '12345678A', false],
    [isSpanishId, 'X1234567A', false],
    [isCodiceFiscale, 'RSSMRA85T10A562S', true],
    [isCodiceFiscale, 'RSSMRA85T10A562T', false],
    [isGermanTaxId, '86095742719', true],
    [isGermanTaxId, '86095742718', false],
    [isGermanTaxId, '12345678901', false],
    [isSwedishPersonnummer, '8112189876', true],
    [isSwedishPersonnummer, '198112189876', true],
    [isSwedishPersonnummer, '8112189875', false],
    [isSwedishPersonnummer, '8113189876', false],
  ] as const)('%o(%s) is %s', (check, value, expected) => {
    expect(check(value)).toBe(expected);
  });
});

describe('masking: cards', () => {
  it.each([
    ['plain', 'Card 4242424242424242 please', 'Card [card •••• 4242] please'],
    ['groups of four', 'my card: 4242 4242 4242 4242.', 'my card: [card •••• 4242].'],
    ['hyphens', 'use 5555-5555-5555-4444 for it', 'use [card •••• 4444] for it'],
    ['Amex 4-6-5', 'Amex 3782 822463 10005 thanks', 'Amex [card •••• 0005] thanks'],
    ['Diners 14 digits', 'Diners 3056 930902 5904', 'Diners [card •••• 5904]'],
    ['non-breaking spaces', 'Karte 4111\u00a01111\u00a01111\u00a01111', 'Karte [card •••• 1111]'],
    ['split across lines', 'Card:\n4242 4242\n4242 4242\nthanks', 'Card:\n[card •••• 4242]\nthanks'],
    ['CRLF line break', 'num 4242 4242 4242\r\n4242 ok', 'num [card •••• 4242] ok'],
    ['followed by the expiry and CVV', '4242 4242 4242 4242 12/27 123', '[card •••• 4242] 12/27 123'],
    ['a CVV group right after it', 'carte 4242 4242 4242 4242 123', 'carte [card •••• 4242] 123'],
    ['in parentheses', '(4111111111111111)', '([card •••• 1111])'],
    ['two cards', '4242424242424242 / 5555555555554444', '[card •••• 4242] / [card •••• 4444]'],
    ['Japanese text around it', 'カード番号は4242424242424242です', 'カード番号は4242424242424242です'],
    ['Japanese with spaces', 'カード番号 4242 4242 4242 4242 です', 'カード番号 [card •••• 4242] です'],
    ['UnionPay 19 digits', '卡号 6205 5000 0000 0000 004', '卡号 [card •••• 0004]'],
  ])('%s', (_name, input, expected) => {
    expect(maskText(input)).toBe(expected);
  });

  it.each([
    ['an order number failing Luhn', 'Order 4242424242424241 shipped'],
    ['a 22-digit tracking number', 'USPS 9400111899223197428490 in transit'],
    ['a card inside a longer digit run', 'ref 42424242424242424242 ok'],
    ['a card glued to letters', 'ID ABC4242424242424242 and 4242424242424242X'],
    ['a phone number', 'call +44 20 7946 0958 or +1 (415) 555-2671'],
    ['a phone number with many groups', 'Tel. 0049 6221 4242 4242 42'],
    ['amounts', 'EUR 1,234,567.89 and 1 234 567 890,12 €'],
    ['dates and times', '2024-12-05 13:45:00, 05.12.2024, 1765000000000 ms'],
    ['an invoice number', 'Invoice INV-2024-000123-4242'],
    ['a UPS tracking number', 'tracking 1Z999AA10123456784'],
    ['an IP address and version', '192.168.100.200 v4.242.4242.42'],
    ['a Luhn-valid number outside every issuer range', 'customer 1000000000000008'],
    ['a Luhn-valid Visa-range phone number after +', 'call +4962214242424242'],
    ['a card-shaped number after other groups', 'ref 77 4242 4242 4242 4242'],
    ['a Visa-range number of a length Visa never issues', 'case 424242424242428'],
    ['mixed separators inside the number', '4242-4242 4242-4242'],
  ])('keeps %s', (_name, input) => {
    expect(maskText(input)).toBe(input);
  });
});

describe('masking: IBANs', () => {
  it.each([
    ['German, spaced', 'IBAN: DE89 3704 0044 0532 0130 00 thanks', 'IBAN: [iban •••• 3000] thanks'],
    ['German, no spaces', 'IBAN DE89370400440532013000.', 'IBAN [iban •••• 3000].'],
    ['lower case', 'iban gb82west12345698765432', 'iban [iban •••• 5432]'],
    ['French with a letter inside', 'RIB FR14 2004 1010 0505 0001 3M02 606', 'RIB [iban •••• 2606]'],
    ['Dutch', 'rekening NL91ABNA0417164300', 'rekening [iban •••• 4300]'],
    ['Norwegian, the shortest', 'konto NO93 8601 1117 947', 'konto [iban •••• 7947]'],
    ['Maltese, the longest here', 'MT84 MALT 0110 0001 2345 MTLC AST0 01S', '[iban •••• 001S]'],
    ['split across lines', 'IBAN:\nES91 2100 0418\n4502 0005 1332', 'IBAN:\n[iban •••• 1332]'],
    ['Swiss in a sentence', 'Bitte auf CH93 0076 2011 6238 5295 7 überweisen', 'Bitte auf [iban •••• 2957] überweisen'],
  ])('%s', (_name, input, expected) => {
    expect(maskText(input)).toBe(expected);
  });

  it.each([
    ['a wrong check digit', 'IBAN DE89 3704 0044 0532 0130 01'],
    ['one group short', 'IBAN DE89 3704 0044 0532 0130 0'],
    ['a longer reference', 'ref DE89370400440532013000123'],
    ['a product code shaped like one', 'model DE12 3456 7890'],
    ['an unknown country', 'XX89 3704 0044 0532 0130 00'],
  ])('keeps %s', (_name, input) => {
    expect(maskText(input)).toBe(input);
  });
});

describe('masking: codes after their labels', () => {
  it.each([
    ['CVV', 'CVV: 123', 'CVV: [cvv]'],
    ['CVC2 with no colon', 'CVC2 987 on the back', 'CVC2 [cvv] on the back'],
    ['security code is', 'the security code is 1234.', 'the security code is [cvv].'],
    ['lower case cvv number', 'cvv number - 321', 'cvv number - [cvv]'],
    ['German', 'Prüfnummer: 321', 'Prüfnummer: [cvv]'],
    ['French', 'cryptogramme visuel : 456', 'cryptogramme visuel : [cvv]'],
    ['Spanish', 'código de seguridad 789', 'código de seguridad [cvv]'],
    ['Italian', 'codice di sicurezza: 012', 'codice di sicurezza: [cvv]'],
    ['Dutch', 'beveiligingscode 345', 'beveiligingscode [cvv]'],
    ['Swedish', 'säkerhetskod: 678', 'säkerhetskod: [cvv]'],
    ['Japanese', 'セキュリティコード：123', 'セキュリティコード：[cvv]'],
    ['label and value on two lines', 'CVV:\n123', 'CVV:\n[cvv]'],
    ['OTP', 'OTP: 123456', 'OTP: [one-time code]'],
    ['verification code in words', 'Your verification code is 482 913.', 'Your verification code is [one-time code].'],
    ['one-time code hyphenated', 'one-time code: 123-456', 'one-time code: [one-time code]'],
    ['2FA code', 'my 2FA code 99887766', 'my 2FA code [one-time code]'],
    ['German', 'Bestätigungscode: 998877', 'Bestätigungscode: [one-time code]'],
    ['German TAN', 'TAN 123456', 'TAN [one-time code]'],
    ['French', 'code de vérification : 443322', 'code de vérification : [one-time code]'],
    ['Spanish', 'código de verificación 551122', 'código de verificación [one-time code]'],
    ['Portuguese', 'código de verificação: 1234', 'código de verificação: [one-time code]'],
    ['Dutch', 'verificatiecode 7788', 'verificatiecode [one-time code]'],
    ['Swedish', 'engångskod 123456', 'engångskod [one-time code]'],
    ['Japanese', '認証コード：987654', '認証コード：[one-time code]'],
    ['Chinese', '验证码 246810', '验证码 [one-time code]'],
    ['a six-digit security code is a one-time code', 'security code: 482913', 'security code: [one-time code]'],
  ])('%s', (_name, input, expected) => {
    expect(maskText(input)).toBe(expected);
  });

  it.each([
    ['a label without a value', 'The CVV field is empty'],
    ['a code that did not arrive', 'the verification code did not arrive'],
    ['a CVV of two digits', 'CVV 12'],
    ['a number too long for a code', 'OTP 1234567890123'],
    ['a word containing a label', 'the otpable 1234 and notan 123456'],
    ['a year after a label', 'verification code from 2024'],
  ])('keeps %s', (_name, input) => {
    expect(maskText(input)).toBe(input);
  });
});

describe('masking: passwords after their labels', () => {
  it.each([
    ['English', 'password: hunter2', 'password: [password]'],
    ['capitals and =', 'PASSWORD=S3cr3t!', 'PASSWORD=[password]'],
    ['is, with a digit', 'my password is Hunter2!', 'my password is [password]'],
    ['German', 'Passwort: Sommer2024! danke', 'Passwort: [password] danke'],
    ['German Kennwort', 'Mein Kennwort lautet: geheim', 'Mein Kennwort lautet: [password]'],
    ['French', 'mot de passe : chatnoir', 'mot de passe : [password]'],
    ['Spanish', 'Contraseña: perro123', 'Contraseña: [password]'],
    ['Portuguese', 'senha: gato456', 'senha: [password]'],
    ['Dutch', 'wachtwoord: fiets99', 'wachtwoord: [password]'],
    ['Dutch, letters only', 'Mijn wachtwoord: fietsbel', 'Mijn wachtwoord: [password]'],
    ['French mdp, letters only', 'mdp : chatnoir', 'mdp : [password]'],
    ['one-time password, letters', 'one-time password: abcdef', 'one-time password: [password]'],
    ['hyphenated label, capitals', 'MOT-DE-PASSE: Azerty', 'MOT-DE-PASSE: [password]'],
    ['Swedish', 'Lösenord: sommar', 'Lösenord: [password]'],
    ['Italian', 'password: ciao1234', 'password: [password]'],
    ['Japanese', 'パスワード：abc123xyz', 'パスワード：[password]'],
    ['Chinese', '密码：mima2024', '密码：[password]'],
    ['Russian', 'пароль: qwerty1', 'пароль: [password]'],
    ['Polish', 'hasło: tajne1', 'hasło: [password]'],
    ['the full stop is kept', 'Password: hunter2.', 'Password: [password].'],
    ['on the next line', 'Password:\nhunter2\nThanks', 'Password:\n[password]\nThanks'],
    ['PIN', 'PIN: 4321', 'PIN: [password]'],
    ['pwd', 'user: bob pwd: x!y', 'user: bob pwd: [password]'],
  ])('%s', (_name, input, expected) => {
    expect(maskText(input)).toBe(expected);
  });

  it.each([
    ['a forgotten password', 'I forgot my password yesterday'],
    ['is, then plain words', 'my password is not working'],
    ['a reset link', 'The password reset link has expired'],
    ['German', 'Passwort vergessen, bitte helfen'],
    ['French', 'mon mot de passe ne marche plus'],
    ['a plural', 'passwords: none of them work'],
    ['a PIN without a value', 'what is my PIN?'],
    ['a pin in a word', 'the pink one: 1234'],
  ])('keeps %s', (_name, input) => {
    expect(maskText(input)).toBe(input);
  });
});

describe('masking: national identifiers', () => {
  it.each([
    ['US SSN with hyphens', 'SSN 078-05-1120', 'SSN [national id]'],
    ['US SSN after its label, bare', 'social security number: 078051120', 'social security number: [national id]'],
    ['UK NINO', 'NI number AB123456C', 'NI number [national id]'],
    ['UK NINO in pairs', 'NINO: AB 12 34 56 C.', 'NINO: [national id].'],
    ['Dutch BSN after its label', 'BSN: 111222333', 'BSN: [national id]'],
    ['Dutch burgerservicenummer', 'mijn burgerservicenummer is 123456782', 'mijn burgerservicenummer is [national id]'],
    ['Spanish DNI', 'DNI 12345678Z', 'DNI [national id]'],
    ['Spanish DNI with a hyphen', 'DNI: 12345678-Z', 'DNI: [national id]'],
    ['Spanish NIE, lower case', 'nie x1234567l', 'nie [national id]'],
    ['Italian codice fiscale', 'CF: RSSMRA85T10A562S', 'CF: [national id]'],
    ['German Steuer-ID', 'Steuer-ID 86095742719', 'Steuer-ID [national id]'],
    ['German Steuer-ID grouped', 'Steueridentifikationsnummer: 86 095 742 719', 'Steueridentifikationsnummer: [national id]'],
    ['Swedish personnummer', 'personnummer 811218-9876', 'personnummer [national id]'],
    ['Swedish personnummer, 12 digits', 'pnr 19811218-9876', 'pnr [national id]'],
    ['Swedish personnummer after its label, bare', 'Personnummer: 8112189876', 'Personnummer: [national id]'],
  ])('%s', (_name, input, expected) => {
    expect(maskText(input)).toBe(expected);
  });

  it.each([
    ['an SSN-shaped part number outside the rules', 'part 000-12-3456 and 912-34-5678'],
    ['nine bare digits without a label', 'order 111222333'],
    ['a BSN failing the 11-proof', 'BSN: 123456789'],
    ['a DNI with the wrong letter', 'DNI 12345678A'],
    ['a NINO with a forbidden prefix', 'QQ123456C and GB123456A'],
    ['a lower-case NINO', 'ab123456c'],
    ['a codice fiscale with the wrong check letter', 'RSSMRA85T10A562T'],
    ['eleven digits after no label', 'order 86095742719'],
    ['a Steuer-ID failing its check', 'Steuer-ID 86095742718'],
    ['a date and serial failing Luhn', 'ticket 811218-9875'],
  ])('keeps %s', (_name, input) => {
    expect(maskText(input)).toBe(input);
  });
});

describe('masking as a whole', () => {
  const mail = [
    'Hallo,',
    'meine Karte 4242 4242 4242 4242 (CVV: 123) wurde doppelt belastet.',
    'Erstattung bitte auf DE89 3704 0044 0532 0130 00.',
    'Login: anna@example.com, Passwort: Sommer2024!',
    'Bestellnummer 4242424242424241, Tel. +49 30 1234567.',
  ].join('\n');

  it('masks every value of a mail, keeps the rest, and names the kinds', () => {
    const masked = maskSensitive(mail);
    expect(masked.text).toBe(
      [
        'Hallo,',
        'meine Karte [card •••• 4242] (CVV: [cvv]) wurde doppelt belastet.',
        'Erstattung bitte auf [iban •••• 3000].',
        'Login: anna@example.com, Passwort: [password]',
        'Bestellnummer 4242424242424241, Tel. +49 30 1234567.',
      ].join('\n'),
    );
    expect(masked.kinds).toEqual(['card', 'cvv', 'iban', 'password']);
  });

  it('is idempotent, and reads its own placeholders back', () => {
    const once = maskText(mail);
    expect(maskText(once)).toBe(once);
    expect(maskedKindsIn(once)).toEqual(['card', 'cvv', 'iban', 'password']);
    expect(maskedKindsIn(mail)).toEqual([]);
  });

  it('tells raw values and placeholders from harmless text', () => {
    expect(holdsSensitive('card 4242424242424242')).toBe(true);
    expect(holdsSensitive('card [card •••• 4242]')).toBe(true);
    expect(holdsSensitive('[one-time code]')).toBe(true);
    expect(holdsSensitive('order 4242424242424241')).toBe(false);
    expect(holdsSensitive('prefers email in the evening')).toBe(false);
  });

  it('leaves text without any digit or label untouched (same string)', () => {
    const text = 'Hello, I would like to change my delivery address. Thanks!';
    expect(maskSensitive(text)).toEqual({ text, kinds: [] });
  });

  it.each([
    ['a megabyte of digits', '4'.repeat(1_000_000)],
    ['digit groups', '4242 '.repeat(50_000)],
    ['labels', 'password: '.repeat(25_000)],
    ['IBAN starts without end', 'DE89 '.repeat(50_000)],
    ['NINO-like pairs', 'AB 12 '.repeat(50_000)],
    ['labels and digits interleaved', 'CVV 1 OTP 2 SSN 3 '.repeat(15_000)],
  ])('reads %s in one pass and keeps its length bounded', (_name, input) => {
    const masked = maskSensitive(input);
    expect(masked.text.length).toBeLessThanOrEqual(input.length * 1.1 + 20);
  });
});
