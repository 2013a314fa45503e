// Recognises what apps and devices append below a reply ("Sent from my iPhone", "Von meinem
// iPhone gesendet", "Télécharger Outlook pour Android", "iPhoneから送信", "发自我的iPhone" …),
// mailing-list footers (Mailman, Google Groups, Groups.io) and one-line dash signatures ("-Raj",
// "— Eleanor Whitfield"). Pure; each check is on one short line or a few following lines.

// A footer names a device or an app; these are the names and the generic words for them.
const DEVICE_OR_APP = [
  'iphon',
  'ipad',
  'ipod',
  'android',
  'samsung',
  'galaxy',
  'huawei',
  'honor',
  'xiaomi',
  'redmi',
  'pixel',
  'oneplus',
  'motorola',
  'nokia',
  'sony',
  'xperia',
  'oppo',
  'vivo',
  'blackberry',
  'windows',
  'ios',
  'outlook',
  'yahoo',
  'aol',
  'gmail',
  'proton',
  'tutanota',
  'tuta',
  'spark',
  'airmail',
  'edison',
  'bluemail',
  'k-9',
  'fairemail',
  'mail.ru',
  'почты',
  'почта',
  'яндекс',
  'yandex',
  'naver',
  '네이버',
  '网易',
  '邮箱',
  'qq',
  'foxmail',
  'gmx',
  'web.de',
  't-online',
  'orange',
  'libero',
  'zoho',
  'mail',
  'mobile',
  'mobil',
  'handy',
  'telefon',
  'phone',
  'smartphone',
  'tablet',
  'móvil',
  'movil',
  'celular',
  'cellulare',
  'telefono',
  'telefoon',
  'appareil',
  'téléphone',
  'dispositivo',
  'dispositivul',
  'smartfon',
  'telefonu',
  'okostelefon',
  'akıllı',
  'κινητό',
  'телефон',
  'смартфон',
  '手机',
  '手機',
  'スマートフォン',
  '携帯',
  '휴대폰',
  '스마트폰',
  'điện thoại',
  'ponsel',
  'טלפון',
  'هاتف',
  'फ़ोन',
  'फोन',
  'มือถือ',
  'app',
];

// Phrases a footer starts with, lower-case, per language: "sent from …" (then a device or an app
// follows) and "get …" (then an app must follow: "Get Outlook for iOS", not "Get me a refund").
const SENT_STARTS = [
  'sent from',
  'sent with',
  'sent via',
  'sent using',
  'sent by', // en
  'von meinem',
  'gesendet von',
  'gesendet mit',
  'diese nachricht wurde von', // de
  'envoyé de',
  'envoyé depuis',
  'envoyé à partir de',
  'envoyé avec', // fr
  'enviado desde',
  'enviado con',
  'enviat des de', // es, ca
  'enviado do',
  'enviado a partir do',
  'enviado pelo',
  'enviado de', // pt
  'inviato da',
  'inviato dal',
  'inviato con', // it
  'verzonden vanaf',
  'verzonden met',
  'verzonden van',
  'verstuurd vanaf',
  'verstuurd met',
  'verstuurd van', // nl
  'skickat från',
  'skickat med',
  'sendt fra',
  'sendt med', // sv, no, da
  'lähetetty', // fi
  'wysłane z',
  'wysłano z', // pl
  'odesláno z',
  'odesláno ze',
  'odoslané z',
  'odoslané zo', // cs, sk
  'küldve', // hu
  'trimis de pe',
  'trimis din', // ro
  'στάλθηκε από',
  'αποστολή από', // el
  'отправлено с',
  'отправлено из',
  'отправлено через',
  'надіслано з',
  'надіслано із',
  'изпратено от', // ru, uk, bg
  'gửi từ',
  'được gửi từ',
  'dikirim dari',
  'dikirim dengan',
  'dihantar dari', // vi, id, ms
  'נשלח מה',
  'נשלח מ',
  'נשלח באמצעות',
  'أُرسلت من',
  'أرسلت من',
  'مرسل من',
  'تم الإرسال من',
  'ส่งจาก', // he, ar, th
  '发自',
  '来自',
  '從我的',
  '从我的',
  '寄自', // zh
];
const GET_STARTS = [
  'get',
  'download',
  'hol dir',
  'télécharger',
  'obtenir',
  'obtenez',
  'obtener',
  'obtén',
  'descargar',
  'obter',
  'obtenha',
  'baixe',
  'scarica',
  'ottieni',
  'hämta',
  'få',
  'hent',
  'hanki',
  'pobierz',
  'stáhněte si',
  'získejte',
  'stiahnite si',
  'töltse le',
  'descărcați',
  'descarcă',
  'obțineți',
  'λήψη',
  'получить',
  'скачайте',
  'отримати',
  'tải',
  'dapatkan',
  'הורד',
  'احصل على',
];
const APPS = [
  'outlook',
  'yahoo',
  'gmail',
  'aol',
  'proton',
  'spark',
  'airmail',
  'edison',
  'bluemail',
  'mail.ru',
  'яндекс',
  'yandex',
  'naver',
  'gmx',
  'web.de',
  'mail app',
  'mail-app',
];

// Phrases a footer ends with (verb-final languages), lower-case.
const FOOTER_ENDS = [
  'gesendet',
  'küldve',
  'gönderildi',
  'edinin',
  'indirin',
  'downloaden',
  'から送信',
  'より送信',
  'を入手',
  'を取得',
  '에서 보냄',
  '에서 보냈습니다',
  '받기',
  '傳送',
  '发送',
  '送信',
  'से भेजा गया',
];

// "Please excuse brevity" lines that ride along with a mobile footer.
const EXCUSES = [
  /^please excuse (?:my |the )?(?:brevity|typos|any typos|spelling)/i,
  /^(?:sorry|apologies) for (?:the |any )?(?:brevity|typos)/i,
  /^excuse (?:the |my )?(?:brevity|typos)/i,
  /^bitte entschuldigen sie (?:die )?(?:kürze|tippfehler)/i,
];

const MAX_FOOTER_LINE = 120;
const MAX_FOOTER_WORDS = 7;

function normaliseFooter(line: string): string {
  return line
    .replace(/<https?:\/\/[^<>\s]{1,500}>/gi, ' ') // "Outlook for Android<https://aka.ms/…>"
    .replace(/\[([^\]]{1,80})\]\([^)\s]{1,500}\)/g, '$1') // markdown links
    .replace(/[®™]/g, '')
    .replace(/^[\s(<*_]+|[\s)>*_.!。]+$/g, '')
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

function hasDeviceOrApp(text: string): boolean {
  return DEVICE_OR_APP.some((word) => text.includes(word));
}

// The rest of a footer is a device or app name, not a sentence: few words, no clause punctuation.
function isShortName(rest: string): boolean {
  if (rest === '' || /[,;:!?]/.test(rest) || /\.\s/.test(rest)) return false;
  return rest.split(' ').length <= MAX_FOOTER_WORDS;
}

function restAfter(text: string, start: string): string | null {
  if (!text.startsWith(start)) return null;
  const next = text[start.length];
  // Phrases in spaced scripts end at a word boundary; "发自我的iPhone" does not need one.
  if (next !== undefined && WORD_CHAR.test(next) && SPACED_SCRIPT.test(start)) return null;
  return text.slice(start.length).trim();
}

const WORD_CHAR = /[\p{L}\p{N}]/u;
const SPACED_SCRIPT = /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Hebrew}\p{Script=Arabic}]$/u;

/** True for an app or device sign-off line ("Sent from my iPhone", "Gesendet von Outlook für Android" …). */
export function isMobileFooter(line: string): boolean {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.length > MAX_FOOTER_LINE) return false;
  if (EXCUSES.some((re) => re.test(trimmed))) return true;
  return isDeviceFooter(trimmed);
}

/**
 * True for the footer line an app or device writes below what was typed ("Sent from my iPhone",
 * "Get Outlook for Android", "iPhoneから送信"), not the "please excuse brevity" lines people write.
 */
export function isDeviceFooter(line: string): boolean {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.length > MAX_FOOTER_LINE) return false;
  const text = normaliseFooter(trimmed);
  if (text.length < 4) return false;
  for (const start of SENT_STARTS) {
    const rest = restAfter(text, start);
    if (rest !== null && isShortName(rest) && hasDeviceOrApp(rest)) return true;
  }
  for (const start of GET_STARTS) {
    const rest = restAfter(text, start);
    if (rest !== null && isShortName(rest) && APPS.some((app) => rest.includes(app))) return true;
  }
  for (const end of FOOTER_ENDS) {
    if (!text.endsWith(end)) continue;
    const rest = text.slice(0, text.length - end.length).trim();
    if (isShortName(rest) && hasDeviceOrApp(rest)) return true;
  }
  return false;
}

// Google Groups and similar list managers' notices, per language.
const LIST_NOTICES = [
  /^you received this message because you are subscribed to/i,
  /^to unsubscribe from this group/i,
  /^sie erhalten diese nachricht, weil sie (?:mitglied|abonnent)/i,
  /^vous recevez ce message(?:,)? (?:car|parce que) vous (?:êtes|etes) abonné/i,
  /^(?:recibiste|has recibido) este mensaje porque (?:estás|estas) suscrito/i,
  /^(?:você|voce) (?:recebeu|está recebendo) esta mensagem porque/i,
  /^hai ricevuto questo messaggio perché sei iscritto/i,
  /^u ontvangt dit bericht omdat u (?:bent )?geabonneerd/i,
  /^groups\.io links:/i,
];
// "<list> mailing list" (Mailman 2), "<list> mailing list -- <list>@<host>" (Mailman 3), or either
// with the address and listinfo URL run onto the same line.
const MAILMAN_LIST_LINE =
  /(?:mailing ?list|mailingliste|liste de diffusion|lista de correo|lista di distribuzione)(?:\s{1,4}(?:--\s{1,4})?\S{1,300}){0,2}$/i;

// Mailman's footer run together on one line, as some renderings of the footer part give it:
// "__ <list> mailing list <address> <listinfo url>" (underscores first, the words "mailing list").
const MAILMAN_ONE_LINE = /^_{2,}[ \t]+\S{1,200}[ \t]+(?:mailing ?list|mailingliste|liste de diffusion|lista de correo)\b/i;
// Mailman 2's own line, "<list> mailing list", with a one- or two-word list name.
const BARE_LIST_LINE = /^[^\s@]{1,100}(?: [^\s@]{1,100})?\s(?:mailing ?list|mailingliste|liste de diffusion|lista de correo)$/i;
// What follows "<list> mailing list" in a Mailman footer: the list address or the listinfo URL.
const LIST_ADDRESS_OR_URL = /^(?:<?[^\s@<>]{1,100}@[^\s@<>]{1,200}>?|<?https?:\/\/\S{1,300})$/i;

/**
 * True when a mailing-list footer starts at line `i`: a Mailman underscore line (two or more
 * underscores) followed by "<list> mailing list", the same footer on one line, a bare
 * "<list> mailing list" line followed by the list's address or listinfo URL, a "-=-=-=" line
 * followed by "Groups.io Links:", or a list manager's "You received this message because …" notice.
 */
export function isListFooterStart(lines: readonly string[], i: number): boolean {
  const line = (lines[i] ?? '').trim();
  if (line.length > 300) return false;
  if (LIST_NOTICES.some((re) => re.test(line))) return true;
  if (MAILMAN_ONE_LINE.test(line)) return true;
  if (line.length <= 200 && BARE_LIST_LINE.test(line)) {
    // Without the underscores, the whole footer must be there: the address, then the listinfo URL.
    const next = nextNonBlankLine(lines, i + 1);
    const after = next === null ? null : nextNonBlankLine(lines, next.index + 1);
    const url = /^<?https?:\/\//i;
    if (next !== null && LIST_ADDRESS_OR_URL.test(next.text) && (url.test(next.text) || (after !== null && url.test(after.text))))
      return true;
  }
  if (!/^(?:_{2,}|(?:-=){3,}-?)$/.test(line)) return false;
  for (let j = i + 1, seen = 0; j < lines.length && seen < 2; j++) {
    const next = (lines[j] ?? '').trim();
    if (next === '') continue;
    seen++;
    if (next.length <= 200 && (MAILMAN_LIST_LINE.test(next) || /^groups\.io links:/i.test(next))) return true;
  }
  return false;
}

function nextNonBlankLine(lines: readonly string[], from: number): { text: string; index: number } | null {
  for (let j = from; j < lines.length && j < from + 3; j++) {
    const next = (lines[j] ?? '').trim();
    if (next !== '') return next.length <= 300 ? { text: next, index: j } : null;
  }
  return null;
}

// "-Raj", "— Eleanor Whitfield", "~ J.": a dash (or tilde) and one to four capitalised words.
const DASH_NAME = /^[-–—~]{1,2}\s?[\p{Lu}\p{Lo}][\p{L}\p{M}.'’-]{0,30}(?:\s[\p{Lu}\p{Lo}][\p{L}\p{M}.'’-]{0,30}){0,3}$/u;
const LIST_ITEM = /^(?:[-–—*•~]|\d{1,3}[.)])\s?/;
const MAX_LINES_AFTER_DASH_NAME = 4;
const MAX_SIGNATURE_LINE = 60;

/**
 * Index of a one-line dash signature among the kept lines (given as their trimmed text, blank
 * lines included), or -1: a dash-name line in its own paragraph (blank line above, not part of
 * a dash list), followed only by up to four short lines (title, phone).
 */
export function dashSignatureStart(kept: readonly string[]): number {
  let nonBlankAfter = 0;
  for (let i = kept.length - 1; i >= 0; i--) {
    const line = kept[i] ?? '';
    if (line === '') continue;
    if (line.length <= 40 && DASH_NAME.test(line)) {
      const above = previousNonBlank(kept, i);
      const blankAbove = i > 0 && kept[i - 1] === '';
      if (above >= 0 && blankAbove && !LIST_ITEM.test(kept[above] ?? '')) return i;
      return -1;
    }
    if (++nonBlankAfter > MAX_LINES_AFTER_DASH_NAME || line.length > MAX_SIGNATURE_LINE) return -1;
  }
  return -1;
}

function previousNonBlank(lines: readonly string[], i: number): number {
  for (let j = i - 1; j >= 0; j--) if ((lines[j] ?? '') !== '') return j;
  return -1;
}
