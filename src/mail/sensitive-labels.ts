/**
 * Values recognised by the label written before them: card security codes ("CVV: 123"), one-time
 * codes ("verification code 482 913"), passwords ("Passwort: Sommer2024!") and national numbers that
 * are too plain to find alone (a BSN or Steuer-ID is nine or eleven bare digits). Labels are found
 * by one regular expression of literal alternatives (no nested quantifier: linear in the text);
 * the value after a label is read by hand within a bounded window. Pure, no I/O.
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
      'senha', 'wachtwoord', 'lösenord', 'losenord', 'parola', 'parola d’accesso', 'パスワード', '密码', '密碼', 'пароль', 'hasło',
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

/** The label pattern: longest first, each space or hyphen as one `[ -]`; escaped literals only. */
const LABEL_PATTERN = new RegExp(
  [...KIND_OF.keys()]
    .sort((a, b) => b.length - a.length)
    .map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/[ -]/g, '[ \\-]'))
    .join('|'),
  'giu',
);

/** A value found after a label: the span to replace and what it is. */
export interface LabelledValue {
  start: number;
  end: number;
  kind: 'cvv' | 'one-time-code' | 'password' | 'national-id';
}

const WORD = /[\p{L}\p{N}_]/u;
const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/u;
export const isWordChar = (ch: string | undefined): boolean => ch !== undefined && WORD.test(ch);

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
  const found: LabelledValue[] = [];
  LABEL_PATTERN.lastIndex = 0;
  for (let match = LABEL_PATTERN.exec(text); match !== null; match = LABEL_PATTERN.exec(text)) {
    const label = match[0];
    const start = match.index;
    const end = start + label.length;
    const cjk = CJK.test(label);
    if (!cjk && (isWordChar(text[start - 1]) || isWordChar(text[end]))) continue;
    const kind = KIND_OF.get(label.toLowerCase().replace(/-/g, ' ')) ?? KIND_OF.get(label.toLowerCase());
    if (!kind) continue;
    const value = valueAfter(text, end, kind);
    if (value) {
      found.push(value);
      LABEL_PATTERN.lastIndex = value.end;
    }
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
