// Extracts the NEW text of an email reply: what the sender wrote in this message, without quoted
// history, forwarded content, signatures or mobile "Sent from" footers. Pure and never throws.
//
// Strategy: prefer the HTML part (clients mark quotes structurally there) and cut the quote
// containers at DOM level; render the rest with htmlToVisibleText; then run the plain-text rules,
// which also cover quotes that are only marked by text ("On … wrote:", "From:/Sent:" blocks, ">").
import EmailReplyParser from 'email-reply-parser';
import { ElementType } from 'htmlparser2';
import {
  htmlToVisibleText,
  stripInvisibleChars,
  type HtmlDocument,
  type HtmlElement,
  type HtmlNode,
} from './html-text.ts';

export interface ReplyInput {
  text: string | null;
  html: string | null;
}

export function extractReplyText(input: ReplyInput): string {
  try {
    return extract(input.text ?? '', input.html ?? '');
  } catch {
    // Not expected; the contract is "never throws", so degrade to the untouched text.
    try {
      return tidy(normalizePlain(input.text ?? '').split('\n'));
    } catch {
      return '';
    }
  }
}

function extract(text: string, html: string): string {
  const hasText = text.trim() !== '';
  if (html.trim() === '') return analyzePlain(text).reply;

  if (hasText) {
    // Inline replies: answers typed between quoted passages sit inside the quote container in the
    // HTML (Gmail puts them inside blockquote.gmail_quote), so DOM-level quote removal would drop
    // them. The text part shows them as unquoted lines between ">" blocks; trust it instead.
    const plain = analyzePlain(text);
    if (plain.interleaved) return plain.reply;
  }

  const fromHtml = analyzePlain(htmlToVisibleText(html, { prune: removeQuotedHtml })).reply;
  if (fromHtml !== '' || !hasText) return fromHtml;
  // An HTML part with no visible text at all (image-only or broken) tells us nothing: use the text
  // part. If the HTML had text and all of it was quote, "" is the right answer.
  return htmlToVisibleText(html) === '' ? analyzePlain(text).reply : '';
}

// ---------------------------------------------------------------------------------------------
// HTML: remove quote containers at DOM level
// ---------------------------------------------------------------------------------------------

/** Containers that hold quoted history (or the client's own signature block); removed whole. */
const QUOTE_CLASSES = new Set([
  'gmail_quote', // Gmail: div.gmail_quote (older) and blockquote.gmail_quote
  'gmail_quote_container', // Gmail (2024+) wrapper of attribution + blockquote
  'gmail_attr', // Gmail "On … wrote:" attribution line
  'gmail_signature',
  'gmail_signature_prefix', // Gmail's "-- " before the signature
  'yahoo_quoted',
  'protonmail_quote',
  'protonmail_signature_block',
  'moz-cite-prefix', // Thunderbird "On … wrote:" before blockquote[type=cite]
  'moz-signature',
  'moz-forward-container', // Thunderbird forward: separator + original message
]);

const QUOTE_IDS = new Set([
  'mail-editor-reference-message-container', // new Outlook / OWA
  'appendonsend', // OWA: empty marker right before the <hr> + divRplyFwdMsg
]);

// Outlook puts the quoted message AFTER this header div, as siblings, so everything following it
// in document order goes. "x_" prefixes appear when Outlook re-quotes Outlook HTML.
const TRUNCATE_ID = /^(?:x_)*divRplyFwdMsg$/;

// Header keys of an Outlook-style "From:/Sent:/To:/Subject:" block, localised.
const FROM_KEY =
  /^\*{0,2}(?:From|Von|De|Van|Da|Från|Fra|Od|От|Від|发件人|寄件者|差出人|보낸 사람)\s*\*{0,2}\s*[:：]/i;
const DATE_KEY =
  /^\*{0,2}(?:Sent|Date|Gesendet|Datum|Envoyé|Enviado(?: el)?|Enviada(?: em)?|Fecha|Verzonden|Data|Inviato|Skickat|Sendt|Wysłano|Отправлено|Дата|发送时间|日期|寄件日期|送信日時|보낸 날짜|날짜)\s*\*{0,2}\s*[:：]/i;
const RECIPIENT_KEY =
  /^\*{0,2}(?:To|Cc|An|Kopie|À|A|Para|Aan|Till|Til|Do|Кому|收件人|抄送|收件者|宛先|받는 사람)\s*\*{0,2}\s*[:：]/i;
const SUBJECT_KEY =
  /^\*{0,2}(?:Subject|Betreff|Objet|Asunto|Assunto|Onderwerp|Oggetto|Ämne|Emne|Temat|Тема|主题|主旨|件名|제목)\s*\*{0,2}\s*[:：]/i;

type Verdict = 'keep' | 'remove' | 'truncate';

/** Detaches quoted-history nodes from the parsed document (used as htmlToVisibleText's prune). */
function removeQuotedHtml(document: HtmlDocument): void {
  const toRemove: HtmlElement[] = [];
  let truncateFrom: HtmlElement | null = null;
  const checks = { headerBlocks: MAX_HTML_HEADER_CHECKS };
  const stack: HtmlNode[] = [...document.children].reverse();
  // Iterative pre-order walk (document order) so that deep nesting cannot overflow the stack.
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node || !isElement(node)) continue;
    const verdict = classify(node, checks);
    if (verdict === 'remove') {
      toRemove.push(node);
      continue;
    }
    if (verdict === 'truncate') {
      truncateFrom = node; // first in document order; everything after it goes anyway
      break;
    }
    for (let i = node.children.length - 1; i >= 0; i--) {
      const child = node.children[i];
      if (child) stack.push(child);
    }
  }
  for (const element of toRemove) detach(element);
  if (truncateFrom) truncateFromNode(truncateFrom);
}

// Real mails have one or two <hr>/border-top separators; hostile markup can have thousands, and
// each check walks a subtree. Bounding both keeps the prune step linear.
const MAX_HTML_HEADER_CHECKS = 50;
const MAX_HEADER_CHECK_NODES = 120;

function classify(element: HtmlElement, checks: { headerBlocks: number }): Verdict {
  const name = element.name.toLowerCase();
  const attribs = element.attribs;
  const id = attribs['id'] ?? '';
  if (TRUNCATE_ID.test(id)) return 'truncate';
  if (QUOTE_IDS.has(id)) return 'remove';
  const classes = (attribs['class'] ?? '').split(/\s+/);
  if (classes.some((cls) => QUOTE_CLASSES.has(cls))) return 'remove';
  // Apple Mail and Thunderbird: <blockquote type="cite">.
  if (name === 'blockquote' && (attribs['type'] ?? '').toLowerCase() === 'cite') return 'remove';
  // Outlook web: <hr> directly followed by the From:/Sent: header block.
  if (name === 'hr') {
    const next = nextElementSibling(element);
    if (next && TRUNCATE_ID.test(next.attribs['id'] ?? '')) return 'truncate';
    if (next && checks.headerBlocks-- > 0 && startsWithHeaderBlock(next)) return 'truncate';
  }
  // Outlook desktop: the header block sits in a div with a top border and starts with "From:".
  const style = attribs['style'] ?? '';
  if (
    /border-top\s*:\s*[^;]*solid/i.test(style) &&
    checks.headerBlocks-- > 0 &&
    startsWithHeaderBlock(element)
  ) {
    return 'truncate';
  }
  return 'keep';
}

function isElement(node: HtmlNode): node is HtmlElement {
  return (
    node.type === ElementType.Tag || node.type === ElementType.Script || node.type === ElementType.Style
  );
}

function nextElementSibling(element: HtmlElement): HtmlElement | null {
  for (let node = element.next; node; node = node.next) {
    if (isElement(node)) return node;
    if (node.type === ElementType.Text && node.data.trim() !== '') return null;
  }
  return null;
}

const LINE_BREAKING_TAGS = new Set(['br', 'p', 'div', 'tr', 'table', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/**
 * True when an element's text starts with an Outlook header block (From:/Sent:/To:/Subject:),
 * judged by the same rule as plain text, so that a customer's "<hr><p>From: the dashboard …"
 * is not mistaken for quoted history.
 */
function startsWithHeaderBlock(element: HtmlElement): boolean {
  let text = '';
  const stack: HtmlNode[] = [element];
  let budget = MAX_HEADER_CHECK_NODES;
  while (stack.length > 0 && text.length < 1500 && budget-- > 0) {
    const node = stack.pop();
    if (!node) break;
    if (node.type === ElementType.Text) {
      text += node.data.replace(/[ \t\n\r\f]+/g, ' ');
    } else if (isElement(node)) {
      if (LINE_BREAKING_TAGS.has(node.name.toLowerCase())) text += '\n';
      for (let i = node.children.length - 1; i >= 0; i--) {
        const child = node.children[i];
        if (child) stack.push(child);
      }
    }
  }
  const headerLines = normalizePlain(text)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return isHeaderBlockStart(headerLines, 0);
}

function detach(node: HtmlNode): void {
  const parent = node.parent;
  if (parent) {
    const index = parent.children.lastIndexOf(node);
    if (index >= 0) parent.children.splice(index, 1);
  }
  if (node.prev) node.prev.next = node.next;
  if (node.next) node.next.prev = node.prev;
  node.parent = null;
  node.prev = null;
  node.next = null;
}

/** Removes `node` and everything after it in document order. */
function truncateFromNode(node: HtmlNode): void {
  let current: HtmlNode = node;
  while (current.parent) {
    const parent: NonNullable<HtmlNode['parent']> = current.parent;
    const index = parent.children.indexOf(current);
    if (index >= 0) {
      for (const removed of parent.children.splice(index + 1)) {
        removed.parent = null;
        removed.prev = null;
        removed.next = null;
      }
    }
    current.next = null;
    current = parent;
  }
  detach(node);
}

// ---------------------------------------------------------------------------------------------
// Plain text rules
// ---------------------------------------------------------------------------------------------

// Standard signature separator: a line that is exactly "-- " (or "--" after trailing-space loss).
const SIG_DELIMITER = /^--[ \t]*$/;

const ORIGINAL_MESSAGE =
  /^-{2,}\s*(?:Original Message|Ursprüngliche Nachricht|Message d['’]origine|Mensaje original|Oorspronkelijk bericht|Messaggio originale|Mensagem original|Originalmeddelande|Opprinnelig melding|Oprindelig meddelelse|Исходное сообщение|原始邮件|原始郵件)\s*-{2,}$/i;

const FORWARD_SEPARATOR = new RegExp(
  '^(?:' +
    [
      String.raw`-{2,}\s*(?:Forwarded message|Weitergeleitete Nachricht|Message transféré|Mensaje reenviado|Doorgestuurd bericht|Messaggio inoltrato|Mensagem encaminhada|Vidarebefordrat meddelande|Пересылаемое сообщение|转发的邮件|轉寄的郵件)\s*-{2,}`,
      String.raw`Begin forwarded message\s?:`,
      String.raw`Anfang der weitergeleiteten Nachricht\s?:`,
      String.raw`Début du message réexpédié\s?:`,
      String.raw`Inicio del mensaje reenviado\s?:`,
      String.raw`Begin doorgestuurd bericht\s?:`,
    ].join('|') +
    ')$',
  'i',
);

// Lines made only of separator characters right above a cut belong to the quote (Outlook's
// "________________________________" line). On their own they are NOT a signature marker.
const SEPARATOR_LINE = /^(?:_{2,}|-{3,}|={3,}|\*{3,})$/;

// "On … wrote:" style attribution lines, by how they end. Each needs a guard (below) because a
// customer may well write "As I wrote:" or "On Monday I wrote:".
const HEADER_ENDINGS: RegExp[] = [
  /\swrote\s?:$/i, // EN (also Japanese clients in English UI)
  /\sschrieb\b.*:$/i, // DE: "Am … schrieb Name <a@b>:" and "Name <a@b> schrieb am …:"
  /\s(?:a\s)?écrit\s?:$/i, // FR: "Le … a écrit :"
  /\sescribió\s?:$/i, // ES
  /\sschreef\b.*:$/i, // NL: "Op … schreef Name <a@b>:"
  /\shet volgende geschreven\s?:$/i, // NL (Apple Mail)
  /\sha\sscritto\s?:$/i, // IT
  /\sescreveu\s?:$/i, // PT
  /\sskrev\b.*:$/i, // SV/DA/NO: "Den … skrev Name <a@b>:"
  /(?:写道|寫道)\s*[:：]$/, // ZH
  /のメッセージ\s*[:：]$/, // JA (Apple Mail)
  /(?:пишет|написал(?:\(а\)|а)?)\s*[:：]$/i, // RU
];
// Gmail in Japanese/Russian writes no verb at all: "2025年3月4日(火) 10:15 Name <a@b>:". Prose can end
// the same way ("I got this from <help@acme.com>:"), so this form also needs a time.
const ADDRESS_COLON_HEADER = /<[^<>\s]+@[^<>\s]+>\s*[:：]$/;
const HEADER_START = /^(?:(?:On|Am|Le|El|Op|Il|Em|Den)\s|在)/i;
const TIME = /\d{1,2}[:.]\d{2}/;
const NUMERIC_DATE = /\d{1,4}\s?[./\-年]\s?\d{1,2}/;
const BRACKETED_ADDRESS = /<[^<>\s]+@[^<>\s]+>|\[mailto:[^\]\s]+\]|\([^()\s]+@[^()\s]+\)/;

// Bounds keep every regex cheap: headers are short lines, a 1 MB line is not a header.
const MAX_HEADER_LINE = 400;
const MAX_PARSER_LINE = 300;
const PARSER_BUDGET = 200; // email-reply-parser second opinions per message
const HEADER_BLOCK_WINDOW = 8;
const MAX_FOOTER_LINE = 120;

const DEVICE = String.raw`(?:(?:iPhone|iPad|iPod|Android|Samsung|Galaxy|Huawei|Xiaomi|Google|Pixel|OnePlus|Motorola|Nokia|Sony|BlackBerry|Windows Phone|Handy|Mobiltelefon|Smartphone|mobile|phone|téléphone|móvil|telefoon|cellulare|telefone)(?:\s[\w-]+){0,4})`;
const FOOTERS: RegExp[] = [
  new RegExp(String.raw`^Sent from my ${DEVICE}\.?$`, 'i'),
  /^(?:Sent from|Get) (?:Outlook|Mail|Yahoo Mail|AOL(?: Mail)?|Gmail|Proton ?Mail)(?:\s(?:for|on)\s[\w ]{1,30})?\.?(?:\s*<[^<>\s]+>)?$/i,
  /^Sent with Proton ?Mail(?: secure email)?\.?$/i,
  new RegExp(String.raw`^(?:Von meinem ${DEVICE} gesendet|Gesendet von meinem ${DEVICE})\.?$`, 'i'),
  /^Gesendet von (?:Outlook|Mail) für [\w ]{1,30}$/i,
  new RegExp(String.raw`^Envoyé (?:de|depuis) mon ${DEVICE}\.?$`, 'i'),
  /^(?:Envoyé à partir de Outlook pour|Télécharger Outlook pour|Obtenez Outlook pour) [\w ]{1,30}(?:\s*<[^<>\s]+>)?$/i,
  new RegExp(String.raw`^Enviado desde mi ${DEVICE}\.?$`, 'i'),
  /^(?:Enviado desde Outlook para|Obtener Outlook para) [\w ]{1,30}(?:\s*<[^<>\s]+>)?$/i,
  new RegExp(String.raw`^(?:Verzonden|Verstuurd) (?:vanaf|met|van) mijn ${DEVICE}\.?$`, 'i'),
  /^(?:Verzonden vanaf|Download) Outlook (?:voor|for) [\w ]{1,30}(?:\s*<[^<>\s]+>)?$/i,
  new RegExp(String.raw`^Inviato da(?:l mio)? ${DEVICE}\.?$`, 'i'),
  new RegExp(String.raw`^Enviado do meu ${DEVICE}\.?$`, 'i'),
  new RegExp(String.raw`^Skickat från min ${DEVICE}\.?$`, 'i'),
];

const replyParser = new EmailReplyParser();

interface PlainAnalysis {
  reply: string;
  /** New text appears after a ">" quoted line (inline reply or bottom-posting). */
  interleaved: boolean;
}

function normalizePlain(text: string): string {
  return stripInvisibleChars(text)
    .replace(/\r\n?/g, '\n')
    .replace(/[\u00A0\u2007\u202F]/g, ' ');
}

function isQuotedLine(line: string): boolean {
  // ">" followed by a digit or "=" is a customer's comparison (">50 orders", ">= 3"), not a quote.
  return /^[ \t]*>(?![=\d])/.test(line);
}

function analyzePlain(raw: string): PlainAnalysis {
  const lines = normalizePlain(raw).split('\n');
  const count = lines.length;
  const quoted = lines.map(isQuotedLine);
  const dropped = new Uint8Array(count);
  const budget = { parser: PARSER_BUDGET };
  const line = (i: number): string => lines[i] ?? '';

  // 1. Find where the quoted history starts ("cut"); drop attribution lines of ">" blocks.
  let cut = count;
  for (let i = 0; i < count; i++) {
    if (quoted[i]) continue;
    const trimmed = line(i).trim();
    if (trimmed === '') continue;
    if (SIG_DELIMITER.test(line(i))) {
      cut = i;
      break;
    }
    if (trimmed.length <= MAX_HEADER_LINE && (ORIGINAL_MESSAGE.test(trimmed) || FORWARD_SEPARATOR.test(trimmed))) {
      cut = i;
      break;
    }
    if (isHeaderBlockStart(lines, i)) {
      cut = i;
      break;
    }
    const headerLines = quoteHeaderLength(lines, quoted, i, budget);
    if (headerLines > 0) {
      const next = nextNonBlank(lines, i + headerLines);
      if (next < count && quoted[next]) {
        // "On … wrote:" introducing a ">" block: drop the attribution, let the ">" rule decide the
        // rest so that answers typed between quoted passages survive.
        for (let k = i; k < i + headerLines; k++) dropped[k] = 1;
        i += headerLines - 1;
        continue;
      }
      cut = i;
      break;
    }
  }

  // 2. Separator lines and blank lines directly above the cut belong to the quote.
  let end = cut;
  while (end > 0) {
    const trimmed = line(end - 1).trim();
    if (trimmed !== '' && !SEPARATOR_LINE.test(trimmed)) break;
    end -= 1;
  }

  const keep: boolean[] = lines.map((_, i) => i < end && !quoted[i] && dropped[i] === 0);

  // 3. Mobile footers: removed only when nothing kept follows them (trailing, or right before a
  //    removed quote). Bottom-up so that stacked footers all go.
  for (let i = end - 1; i >= 0; i--) {
    if (!keep[i]) continue;
    const trimmed = line(i).trim();
    if (trimmed === '' || trimmed.length > MAX_FOOTER_LINE) continue;
    if (!FOOTERS.some((re) => re.test(trimmed))) continue;
    const next = nextNonBlank(lines, i + 1);
    if (next >= end || !keep[next]) keep[i] = false;
  }

  // 4. Does new text follow a quoted line? (inline reply / bottom-post)
  let interleaved = false;
  let sawQuote = false;
  for (let i = 0; i < end && !interleaved; i++) {
    if (quoted[i]) sawQuote = true;
    else if (sawQuote && keep[i] && line(i).trim() !== '') interleaved = true;
  }

  return { reply: tidy(lines.filter((_, i) => keep[i])), interleaved };
}

function nextNonBlank(lines: string[], from: number): number {
  let i = from;
  while (i < lines.length && (lines[i] ?? '').trim() === '') i++;
  return i;
}

/**
 * Outlook-style header block: "From:" followed within a few lines by "Sent:/Date:" and
 * "To:/Subject:". Also requires a Subject line or an address, so that "From: Berlin / To: Paris /
 * Date: 4 May" in a customer's travel question is not mistaken for quoted history.
 */
function isHeaderBlockStart(lines: string[], start: number): boolean {
  const first = (lines[start] ?? '').trim();
  if (first.length > MAX_HEADER_LINE || !FROM_KEY.test(first)) return false;
  let hasDate = false;
  let hasRecipientOrSubject = false;
  let hasSubject = false;
  let hasAddress = first.includes('@');
  const stop = Math.min(lines.length, start + 1 + HEADER_BLOCK_WINDOW);
  for (let j = start + 1; j < stop; j++) {
    const trimmed = (lines[j] ?? '').trim();
    if (trimmed.length > MAX_HEADER_LINE) continue;
    if (DATE_KEY.test(trimmed)) {
      hasDate = true;
    } else if (SUBJECT_KEY.test(trimmed)) {
      hasSubject = true;
      hasRecipientOrSubject = true;
    } else if (RECIPIENT_KEY.test(trimmed)) {
      hasRecipientOrSubject = true;
      if (trimmed.includes('@')) hasAddress = true;
    }
  }
  return hasDate && hasRecipientOrSubject && (hasSubject || hasAddress);
}

/**
 * Number of lines (0, 1 or 2) of an attribution line such as "On <date>, <name> wrote:" starting
 * at line `i`. Two lines when a client wrapped it ("… <jane@example.com>\nwrote:").
 */
function quoteHeaderLength(
  lines: string[],
  quoted: boolean[],
  i: number,
  budget: { parser: number },
): number {
  const first = (lines[i] ?? '').trim();
  if (isQuoteHeader(first, true, budget)) return 1;

  const second = (lines[i + 1] ?? '').trim();
  if (
    second !== '' &&
    !quoted[i + 1] &&
    second.length <= 200 &&
    (HEADER_START.test(first) || BRACKETED_ADDRESS.test(first)) &&
    // "On Monday I was charged twice." ends a sentence; a wrapped header never does.
    !/[.!?]$/.test(first) &&
    !isQuoteHeader(second, true, budget) &&
    isQuoteHeader(`${first} ${second}`, true, budget)
  ) {
    return 2;
  }

  // Weaker evidence is enough when a ">" block follows: then only this one line is dropped.
  const next = nextNonBlank(lines, i + 1);
  if (next < lines.length && quoted[next] && isQuoteHeader(first, false, budget)) return 1;
  return 0;
}

/**
 * `strict` guards against customer prose: a header that starts with a language keyword
 * ("On", "Am", "Le", …) must contain a time or an address (real clients always write one); one
 * without a keyword needs a bracketed address or a numeric date plus a time.
 */
function isQuoteHeader(line: string, strict: boolean, budget: { parser: number }): boolean {
  if (line.length < 6 || line.length > MAX_HEADER_LINE) return false;
  if (HEADER_ENDINGS.some((re) => re.test(line))) {
    if (!strict) return true;
    if (HEADER_START.test(line)) return TIME.test(line) || line.includes('@');
    return BRACKETED_ADDRESS.test(line) || (NUMERIC_DATE.test(line) && TIME.test(line));
  }
  if (ADDRESS_COLON_HEADER.test(line)) return !strict || TIME.test(line);
  // Second opinion from email-reply-parser for the languages it knows and we don't list (Polish
  // "W dniu … pisze:", Finnish "kirjoitti:", Korean "작성:", …). Only on short lines ending in a
  // colon: its regexes backtrack quadratically on long lines (40 kB line ≈ 1 s). It also flags
  // prose such as "In 2024 I got mail from support <help@x.com>:", hence the time guard.
  if (line.length > MAX_PARSER_LINE || !/[:：]$/.test(line) || budget.parser <= 0) return false;
  if (strict && !TIME.test(line)) return false;
  budget.parser -= 1;
  return parserSeesQuoteHeader(line);
}

function parserSeesQuoteHeader(line: string): boolean {
  try {
    // The parser marks a fragment "quoted" when a quote-header line is preceded by an empty line.
    return replyParser
      .read(`\n${line}`)
      .getFragments()
      .some((fragment) => fragment.isQuoted());
  } catch {
    return false;
  }
}

/** Trailing spaces removed, runs of blank lines collapsed to one, outer blank lines trimmed. */
function tidy(lines: string[]): string {
  return lines
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
