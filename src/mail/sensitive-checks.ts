/**
 * The checksums and format rules that tell a sensitive value from a number that only looks like
 * one: Luhn and the issuer ranges of payment cards, the IBAN's length per country and its mod-97,
 * and the national identifiers whose rules can be checked (US SSN, UK NINO, Dutch BSN, Spanish
 * DNI/NIE, Italian codice fiscale, German Steuer-ID, Swedish personnummer). Each function takes the
 * bare characters (separators already removed) and does work proportional to them. Pure, no I/O.
 */

/** Luhn (ISO/IEC 7812): the check used by card numbers and Swedish personnummer. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (d < 0 || d > 9) return false;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/**
 * Whether 13-19 digits are a payment card number: an issuer range of a major brand (Visa,
 * Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro, Mir, RuPay) and the Luhn check. The
 * issuer ranges keep millisecond timestamps (17…), phone numbers with a country code (1…, 7…, 9…)
 * and most reference numbers out even when they pass Luhn by chance (one in ten does).
 */
export function isCardNumber(digits: string): boolean {
  const n = digits.length;
  if (n < 13 || n > 19 || !luhnValid(digits)) return false;
  const two = Number(digits.slice(0, 2));
  const four = Number(digits.slice(0, 4));
  switch (digits[0]) {
    case '4':
      return n === 13 || n === 16 || n === 19; // Visa and Visa Electron
    case '2':
      return n >= 16 && ((four >= 2200 && four <= 2204) || (four >= 2221 && four <= 2720)); // Mir; Mastercard 2-series
    case '3':
      // Amex 34/37 (15), Diners 30/36/38/39 (14-19), JCB 35 (16-19)
      if (two === 34 || two === 37) return n === 15;
      return two === 35 ? n >= 16 : (two === 30 || two === 36 || two === 38 || two === 39) && n >= 14;
    case '5':
      return n === 16 || two === 50 || two >= 56; // Mastercard 51-55 (16); Maestro 50, 56-59 (13-19)
    case '6':
      return n >= 16 || (n >= 13 && (two === 63 || two === 67)); // Discover, UnionPay, RuPay, Troy (16-19); Maestro 63, 67 (13-19)
    case '8':
      return n >= 16 && (two === 81 || two === 82); // RuPay, UnionPay 81
    default:
      return false;
  }
}

/** IBAN length per country (ISO 13616 registry), for the countries that issue them. */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28,
  CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18,
  GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21,
  LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28,
  PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, ST: 25, SV: 28,
  TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
}; // prettier-ignore

/** The IBAN length of a two-letter country code (upper case), or undefined when it issues none. */
export function ibanLength(country: string): number | undefined {
  return Object.hasOwn(IBAN_LENGTHS, country) ? IBAN_LENGTHS[country] : undefined;
}

/** Value of an IBAN character: 0-9 as themselves, A-Z as 10-35; -1 for anything else. */
function ibanCharValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 90) return code - 55;
  return -1;
}

/** ISO 7064 MOD 97-10 over an upper-case IBAN without separators: its country's length and remainder 1. */
export function isIban(iban: string): boolean {
  if (ibanLength(iban.slice(0, 2)) !== iban.length || !/^[A-Z]{2}\d{2}$/.test(iban.slice(0, 4))) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (let i = 0; i < moved.length; i++) {
    const v = ibanCharValue(moved.charCodeAt(i));
    if (v < 0) return false;
    rest = (rest * (v > 9 ? 100 : 10) + v) % 97;
  }
  return rest === 1;
}

/** US Social Security number (9 digits): area not 000, 666 or 900-999; group not 00; serial not 0000. */
export function isUsSsn(digits: string): boolean {
  if (!/^\d{9}$/.test(digits)) return false;
  const area = Number(digits.slice(0, 3));
  return area !== 0 && area !== 666 && area < 900 && digits.slice(3, 5) !== '00' && digits.slice(5) !== '0000';
}

/**
 * UK National Insurance number (upper case, no spaces): two prefix letters (not D, F, I, Q, U, V;
 * the second not O; not BG, GB, KN, NK, NT, TN, ZZ), six digits, a suffix A-D.
 */
export function isUkNino(value: string): boolean {
  if (!/^[A-Z]{2}\d{6}[A-D]$/.test(value)) return false;
  const [first, second] = [value[0]!, value[1]!];
  if ('DFIQUV'.includes(first) || 'DFIOQUV'.includes(second)) return false;
  return !['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'].includes(value.slice(0, 2));
}

/** Dutch BSN: 9 digits (8 with a leading zero dropped) passing the "11-proof". */
export function isDutchBsn(digits: string): boolean {
  const d = digits.length === 8 ? `0${digits}` : digits;
  if (!/^\d{9}$/.test(d) || d === '000000000') return false;
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (9 - i) * (d.charCodeAt(i) - 48);
  sum -= d.charCodeAt(8) - 48;
  return sum % 11 === 0;
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

/** Spanish DNI (8 digits and a letter) or NIE (X, Y or Z, 7 digits, a letter), upper case: the letter is the number mod 23. */
export function isSpanishId(value: string): boolean {
  const nie = /^[XYZ]\d{7}[A-Z]$/.test(value);
  if (!nie && !/^\d{8}[A-Z]$/.test(value)) return false;
  const number = nie ? `${'XYZ'.indexOf(value[0]!)}${value.slice(1, 8)}` : value.slice(0, 8);
  return DNI_LETTERS[Number(number) % 23] === value[8];
}

// Codice fiscale: characters at odd positions (1st, 3rd, …) count by this table (0-9 then A-Z);
// at even positions digits count as themselves and letters as A=0 … Z=25.
const CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
const CF_SHAPE = /^[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-EHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$/;

/** Italian codice fiscale (16 characters, upper case; omocodia letters allowed): its check character. */
export function isCodiceFiscale(value: string): boolean {
  if (!CF_SHAPE.test(value)) return false;
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const code = value.charCodeAt(i);
    const digit = code <= 57;
    if (i % 2 === 0) sum += CF_ODD[digit ? code - 48 : code - 65]!;
    else sum += digit ? code - 48 : code - 65;
  }
  return String.fromCharCode(65 + (sum % 26)) === value[15];
}

/**
 * German Steuerliche Identifikationsnummer: 11 digits, the first not 0, one digit of the first ten
 * repeated two or three times (and no other repeated), and the ISO 7064 MOD 11,10 check digit.
 */
export function isGermanTaxId(digits: string): boolean {
  if (!/^[1-9]\d{10}$/.test(digits)) return false;
  const counts = new Map<string, number>();
  for (const c of digits.slice(0, 10)) counts.set(c, (counts.get(c) ?? 0) + 1);
  const repeated = [...counts.values()].filter((n) => n > 1);
  if (repeated.length !== 1 || repeated[0]! > 3) return false;
  let product = 10;
  for (let i = 0; i < 10; i++) {
    let sum = (digits.charCodeAt(i) - 48 + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  const check = (11 - product) % 10;
  return check === digits.charCodeAt(10) - 48;
}

/**
 * Swedish personnummer or samordningsnummer: 10 digits (YYMMDDNNNC) or 12 (YYYYMMDDNNNC), a real
 * month and day (day + 60 for a samordningsnummer), and Luhn over the last ten digits.
 */
export function isSwedishPersonnummer(digits: string): boolean {
  if (!/^\d{10}(?:\d{2})?$/.test(digits)) return false;
  const ten = digits.slice(-10);
  const month = Number(ten.slice(2, 4));
  const rawDay = Number(ten.slice(4, 6));
  const day = rawDay > 60 ? rawDay - 60 : rawDay;
  if (digits.length === 12 && !['18', '19', '20'].includes(digits.slice(0, 2))) return false;
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && luhnValid(ten);
}
