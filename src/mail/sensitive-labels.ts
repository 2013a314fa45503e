/**
 * Values recognised by the label written before them: card security codes ("CVV: 123"), one-time
 * codes ("verification code 482 913"), passwords ("Passwort: Sommer2024!") and national numbers that
 * are too plain to find alone (a BSN or Steuer-ID is nine or eleven bare digits). Labels are found
 * by reading the text word by word and looking each word up as the first word of a label (then the
 * next words, joined by one space or hyphen, must follow); labels in scripts without spaces are
 * looked for with indexOf. The value after a label is read by hand within a bounded window. Linear
 * in the text, no regular expression over it. Pure, no I/O.
 */
import { isDutchBsn, isGermanTaxId, isSwedishPersonnummer, isUsSsn } from './sensitive-checks.ts';

/** What a label announces; `national-id` carries which number it names, for its check. */
type LabelKind = 'cvv' | 'one-time-code' | 'password' | 'pin' | 'ssn' | 'bsn' | 'steuer-id' | 'personnummer';

// Lower case; a space also matches a hyphen (and the reverse). CJK labels need no word boundary.
const LABELS: ReadonlyArray<[LabelKind, readonly string[]]> = [
  [
    'cvv',
    ['cvv', 'cvv2', 'cvc', 'cvc2', 'cvn', 'csc', 'cid', 'security code', 'card security code', 'card verification code',
      'card verification value', 'verification value', 'sicherheitscode', 'kartenprüfnummer', 'prüfnummer', 'prüfziffer',
      'cryptogramme', 'cryptogramme visuel', 'code de sécurité', 'code de securite', 'código de seguridad', 'codigo de seguridad',
      'código de segurança', 'codigo de seguranca', 'codice di sicurezza', 'codice di controllo', 'beveiligingscode',
      'kaartverificatiecode', 'säkerhetskod', 'kontrollsiffror', 'セキュリティコード', '安全码', 'код безопасности'],
  ],
  [
    'one-time-code',
    ['one time code', 'one time passcode', 'one time password', 'otp', 'otp code', 'verification code', 'verify code',
      'authentication code', 'auth code', '2fa code', 'mfa code', 'two factor code', 'login code', 'log in code', 'sign in code',
      'sms code', 'security pin', 'bestätigungscode', 'verifizierungscode', 'einmalcode', 'einmalpasswort', 'anmeldecode', 'tan',
      'sms tan', 'mtan', 'code de vérification', 'code de verification', 'code à usage unique', 'code sms', 'código de verificación',
      'codigo de verificacion', 'código de un solo uso', 'código de verificação', 'codigo de verificacao', 'código sms',
      'codice di verifica', 'codice otp', 'verificatiecode', 'eenmalige code', 'sms code', 'verifieringskod', 'engångskod',
      '認証コード', '確認コード', 'ワンタイムパスワード', '验证码', '驗證碼', 'код подтверждения'],
  ],
  [
    'password',
    ['password', 'passwd', 'pwd', 'pw', 'passcode', 'passwort', 'kennwort', 'mot de passe', 'mdp', 'contraseña', 'contrasena',
      'senha', 'wachtwoord', 'lösenord', 'losenord', 'parola', 'パスワード', '密码', '密碼', 'пароль', 'hasło',
      'haslo', 'salasana', 'adgangskode', 'passord', 'şifre', 'sifre', 'heslo', 'jelszó'],
  ],
  ['pin', ['pin', 'pin code', 'pin nummer', 'geheimzahl', 'code pin', 'código pin', 'pincode', 'pinkod']],
  ['ssn', ['ssn', 'social security number', 'social security no', 'soc sec no']],
  ['bsn', ['bsn', 'burgerservicenummer', 'bsn nummer', 'sofinummer', 'sofi nummer']],
  ['steuer-id', ['steuer id', 'steuerid', 'steuer idnr', 'steuer identifikationsnummer', 'steueridentifikationsnummer',
    'steuerliche identifikationsnummer', 'identifikationsnummer', 'idnr']],
  ['personnummer', ['personnummer', 'personnr', 'samordningsnummer']],
]; // prettier-ignore

const KIND_OF = new Map<string, LabelKind>();
for (const [kind, labels] of LABELS) for (const label of labels) KIND_OF.set(label, kind);

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/u;

/** Space-separated labels by their first word, each as its words, longest first. */
const BY_FIRST_WORD = new Map<string, Array<{ words: string[]; kind: LabelKind }>>();
/** Labels in scripts written without spaces, found with indexOf. */
const UNSPACED: Array<{ label: string; kind: LabelKind }> = [];
for (const [label, kind] of KIND_OF) {
  if (CJK.test(label)) {
    UNSPACED.push({ label, kind });
    continue;
  }
  const words = label.split(/[ -]/);
  const entries = BY_FIRST_WORD.get(words[0]!) ?? [];
  entries.push({ words, kind });
  entries.sort((a, b) => b.words.length - a.words.length);
  BY_FIRST_WORD.set(words[0]!, entries);
}

/** A value found after a label: the span to replace and what it is. */
export interface LabelledValue {
  start: number;
  end: number;
  kind: 'cvv' | 'one-time-code' | 'password' | 'national-id';
}

const WORD = /[\p{L}\p{N}_]/u;

/** A letter, digit or underscore of any script (ASCII without a regular expression). */
export function isWordChar(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const c = ch.charCodeAt(0);
  if (c < 128) return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
  return WORD.test(ch);
}

// Words that may stand between a label and its value ("CVV number is 123", "mon mot de passe est …").
const FILLERS = new Set(['is', 'ist', 'est', 'es', 'é', 'är', 'er', 'lautet', 'was', 'were', 'code', 'number', 'no', 'nr', 'nummer',
  'numero', 'número', 'numéro', 'de', 'van', 'of', 'my', 'mein', 'meine', 'mon', 'mi', 'meu', 'mijn', 'min', 'mitt', 'il', 'mio',
  'la', 'le', 'el', 'the', 'your', 'ihr', 'ihre', 'votre', 'su', 'seu', 'sua', 'je', 'jouw', 'din', 'ditt', 'het']); // prettier-ignore
const VERBS = new Set(['is', 'ist', 'est', 'es', 'é', 'är', 'er', 'lautet', 'was', 'were']);

/** Characters skipped between a label and its value (digits labels); passwords take fewer. */
const GAP_PUNCT = new Set([':', '：', '=', '#', '-', '–', '—', '"', "'", '“', '”', '„', '«', '»', '(', ')', '（', '）', '.', '*']);
const MAX_GAP = 40;
const MAX_PASSWORD = 128;

/** Every value announced by a label in `text`, in order. */
export function labelledValues(text: string): LabelledValue[] {
  const labels = [...spacedLabels(text), ...unspacedLabels(text)].sort((a, b) => a.end - b.end);
  const found: LabelledValue[] = [];
  let after = 0;
  for (const { end, kind } of labels) {
    if (end < after) continue;
    const value = valueAfter(text, end, kind);
    if (value) {
      found.push(value);
      after = value.end;
    }
  }
  return found;
}

/** The end of a word (letters and digits of any script) starting at `at`. */
function wordEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length && isWordChar(text[i])) i++;
  return i;
}

/** Labels written as words: each word of the text looked up as a label's first word. */
function spacedLabels(text: string): Array<{ end: number; kind: LabelKind }> {
  const found: Array<{ end: number; kind: LabelKind }> = [];
  let i = 0;
  while (i < text.length) {
    if (!isWordChar(text[i])) {
      i++;
      continue;
    }
    const end = wordEnd(text, i);
    const entries = end - i <= 40 ? BY_FIRST_WORD.get(text.slice(i, end).toLowerCase()) : undefined;
    const label = entries?.map((e) => ({ end: labelEnd(text, end, e.words), kind: e.kind })).find((m) => m.end > 0);
    if (label) found.push(label);
    i = end;
  }
  return found;
}

/** Where a label's later words end when they follow `from` (one space or hyphen before each); 0 when they do not. */
function labelEnd(text: string, from: number, words: readonly string[]): number {
  let at = from;
  for (const word of words.slice(1)) {
    if (text[at] !== ' ' && text[at] !== '-') return 0;
    const end = wordEnd(text, at + 1);
    if (text.slice(at + 1, end).toLowerCase() !== word) return 0;
    at = end;
  }
  return at;
}

/** Labels in scripts written without spaces (Japanese, Chinese), when the text holds such a script at all. */
function unspacedLabels(text: string): Array<{ end: number; kind: LabelKind }> {
  if (!CJK.test(text)) return [];
  const found: Array<{ end: number; kind: LabelKind }> = [];
  for (const { label, kind } of UNSPACED) {
    for (let at = text.indexOf(label); at >= 0; at = text.indexOf(label, at + label.length)) found.push({ end: at + label.length, kind });
  }
  return found;
}

interface Gap {
  /** Where the value starts. */
  at: number;
  /** A ':' or '=' was seen (or an "is"-like word). */
  separated: boolean;
  verb: boolean;
}

/** Skips separators, punctuation and filler words after a label, within `MAX_GAP` characters and one line break. */
function skipGap(text: string, from: number, kind: LabelKind): Gap {
  let i = from;
  let separated = false;
  let verb = false;
  let newlines = 0;
  const limit = Math.min(text.length, from + MAX_GAP);
  while (i < limit) {
    const ch = text[i]!;
    if (ch === '\n') {
      if (++newlines > 1) break;
      i++;
    } else if (/\s/.test(ch)) i++;
    else if (ch === ':' || ch === '：' || ch === '=') {
      separated = true;
      i++;
    } else if (kind !== 'password' && GAP_PUNCT.has(ch)) i++;
    else if (isWordChar(ch) && !/\d/.test(ch)) {
      let j = i;
      while (j < limit && isWordChar(text[j]) && !/\d/.test(text[j]!)) j++;
      const word = text.slice(i, j).toLowerCase();
      if (!FILLERS.has(word) || isWordChar(text[j])) break;
      if (VERBS.has(word)) verb = true;
      i = j;
    } else break;
  }
  return { at: i, separated, verb };
}

function valueAfter(text: string, labelEnd: number, kind: LabelKind): LabelledValue | null {
  const gap = skipGap(text, labelEnd, kind);
  if (kind === 'password') return passwordAt(text, gap);
  const digits = digitsAt(text, gap.at);
  if (!digits) return null;
  const { value, end } = digits;
  const span = { start: gap.at, end };
  switch (kind) {
    case 'cvv':
      if (value.length >= 3 && value.length <= 4) return { ...span, kind: 'cvv' };
      return value.length >= 5 && value.length <= 8 ? { ...span, kind: 'one-time-code' } : null;
    case 'one-time-code':
      return value.length >= 4 && value.length <= 8 ? { ...span, kind: 'one-time-code' } : null;
    case 'pin':
      return value.length >= 4 && value.length <= 8 && (gap.separated || gap.verb) ? { ...span, kind: 'password' } : null;
    case 'ssn':
      return isUsSsn(value) ? { ...span, kind: 'national-id' } : null;
    case 'bsn':
      return isDutchBsn(value) ? { ...span, kind: 'national-id' } : null;
    case 'steuer-id':
      return isGermanTaxId(value) ? { ...span, kind: 'national-id' } : null;
    case 'personnummer':
      return isSwedishPersonnummer(value) ? { ...span, kind: 'national-id' } : null;
  }
}

/** Up to 12 digits in groups joined by one space, hyphen or slash, ending on a word boundary. */
function digitsAt(text: string, at: number): { value: string; end: number } | null {
  let i = at;
  let value = '';
  for (;;) {
    const groupStart = i;
    while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    if (i === groupStart) return null;
    value += text.slice(groupStart, i);
    if (value.length > 12) return null;
    const sep = text[i];
    const next = text.charCodeAt(i + 1);
    if ((sep === ' ' || sep === '-' || sep === '/' || sep === '\u00a0') && next >= 48 && next <= 57) {
      i++;
      continue;
    }
    return isWordChar(text[i]) ? null : { value, end: i };
  }
}

/**
 * The password after its label: the next run of non-space characters. Without ':' or '=' it must
 * follow an "is"-like word and look like a password (a digit or a symbol), so "my password is not
 * working" keeps its words. A trailing full stop or comma is left outside.
 */
function passwordAt(text: string, gap: Gap): LabelledValue | null {
  if (!gap.separated && !gap.verb) return null;
  let end = gap.at;
  while (end < text.length && end - gap.at <= MAX_PASSWORD && !/\s/.test(text[end]!)) end++;
  if (end === gap.at || end - gap.at > MAX_PASSWORD) return null;
  const whole = text.slice(gap.at, end);
  const token = whole.length > 1 && /[.,;]$/.test(whole) ? whole.slice(0, -1) : whole;
  if (token === '[password]') return null;
  if (!gap.separated && !/[\d\p{P}\p{S}]/u.test(token)) return null;
  return { start: gap.at, end: gap.at + token.length, kind: 'password' };
}
