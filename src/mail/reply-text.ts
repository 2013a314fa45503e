// Extracts the NEW text of an email reply: what the sender wrote in this message, without quoted
// history, forwarded content, signatures or mobile "Sent from" footers. Pure and never throws.
//
// Strategy: prefer the HTML part (clients mark quotes structurally there) and cut the quote
// containers at DOM level; render the rest with htmlToVisibleText; then run the plain-text rules,
// which also cover quotes that are only marked by text ("On … wrote:", "From:/Sent:" blocks, ">").
import { ElementType } from 'htmlparser2';
import { htmlToVisibleText, stripInvisibleChars, type HtmlDocument, type HtmlElement, type HtmlNode } from './html-text.ts';
import { attributionAt, splitSameLineAttribution } from './attribution.ts';
import { dashSignatureStart, isDeviceFooter, isListFooterStart, isMobileFooter } from './footers.ts';
import { isReplySubject, usenetQuotedLines } from './quote-prefix.ts';
import { headerBlockAt, isForwardSubject, separatorKind } from './header-block.ts';

/** The two body parts of a message, as mailparser gives them (null when absent). */
export interface ReplyInput {
  text: string | null;
  html: string | null;
}

/**
 * The new text of a reply. An empty string when the message has no new text of its own (only
 * quoted history). A message that is only a forward returns the forwarded message's new text,
 * since that is what the customer is sending us.
 */
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
  const reply = extractOwnText(text, html);
  if (reply !== '') return reply;
  const source = text.trim() !== '' ? text : html.trim() !== '' ? htmlToVisibleText(html) : '';
  return forwardedText(source) ?? quotedOnlyText(source) ?? '';
}

function extractOwnText(text: string, html: string): string {
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
// in document order goes. "x_" prefixes appear when Outlook re-quotes Outlook HTML. Zimbra marks
// its separator <hr id="zwchr"> the same way.
const TRUNCATE_ID = /^(?:x_)*(?:divRplyFwdMsg|zwchr)$/;

type Verdict = 'keep' | 'remove' | 'truncate' | 'inline';

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
    if (verdict === 'inline') {
      // Answers typed between the quoted passages: drop the attribution and the passages only.
      for (const child of node.children) {
        if (isElement(child) && (isQuotePassage(child) || hasClass(child, 'gmail_attr'))) toRemove.push(child);
      }
    }
    for (let i = node.children.length - 1; i >= 0; i--) {
      const child = node.children[i];
      if (child) stack.push(child);
    }
  }
  detachAll(toRemove);
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
  if (classes.some((cls) => QUOTE_CLASSES.has(cls))) {
    return name !== 'blockquote' && hasInlineAnswers(element) ? 'inline' : 'remove';
  }
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
  if (/border-top\s*:\s*[^;]*solid/i.test(style) && checks.headerBlocks-- > 0 && startsWithHeaderBlock(element)) {
    return 'truncate';
  }
  return 'keep';
}

function hasClass(element: HtmlElement, cls: string): boolean {
  return (element.attribs['class'] ?? '').split(/\s+/).includes(cls);
}

function isQuotePassage(element: HtmlElement): boolean {
  return element.name.toLowerCase() === 'blockquote';
}

/**
 * Gmail keeps an inline reply inside its quote container: attribution, then quoted passages
 * (blockquote) with the customer's answers between them as siblings. True when a child with
 * visible text follows a quoted passage.
 */
function hasInlineAnswers(container: HtmlElement): boolean {
  let sawPassage = false;
  let budget = MAX_HEADER_CHECK_NODES;
  for (const child of container.children) {
    if (budget-- <= 0) return false;
    if (isElement(child) && isQuotePassage(child)) {
      sawPassage = true;
      continue;
    }
    if (!sawPassage) continue;
    if (child.type === ElementType.Text && child.data.trim() !== '') return true;
    if (isElement(child) && child.name.toLowerCase() !== 'br' && boundedText(child, 40).trim() !== '') return true;
  }
  return false;
}

function boundedText(element: HtmlElement, maxNodes: number): string {
  let text = '';
  const stack: HtmlNode[] = [element];
  let budget = maxNodes;
  while (stack.length > 0 && budget-- > 0 && text.length < 200) {
    const node = stack.pop();
    if (!node) break;
    if (node.type === ElementType.Text) text += node.data;
    else if (isElement(node)) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as HtmlNode);
  }
  return text;
}

function isElement(node: HtmlNode): node is HtmlElement {
  return node.type === ElementType.Tag || node.type === ElementType.Script || node.type === ElementType.Style;
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
  return headerBlockAt(headerLines, 0) !== null;
}

/**
 * Detaches many nodes with one pass over each affected parent's children: detaching one by one
 * costs a search and a splice each, quadratic for a container of thousands of quoted passages.
 */
function detachAll(nodes: readonly HtmlNode[]): void {
  const removed = new Set(nodes);
  const parents = new Set<NonNullable<HtmlNode['parent']>>();
  for (const node of nodes) if (node.parent) parents.add(node.parent);
  for (const parent of parents) {
    const kept = parent.children.filter((child) => !removed.has(child));
    parent.children = kept;
    for (let i = 0; i < kept.length; i++) {
      const child = kept[i] as HtmlNode;
      child.prev = kept[i - 1] ?? null;
      child.next = kept[i + 1] ?? null;
    }
  }
  for (const node of nodes) {
    node.parent = null;
    node.prev = null;
    node.next = null;
  }
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

// Lines made only of separator characters right above a cut belong to the quote (Outlook's
// "________________________________" line). On their own they are NOT a signature marker.
const SEPARATOR_LINE = /^(?:_{2,}|-{3,}|={3,}|\*{3,})$/;

const MAX_FOOTER_LINE = 120;

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

/**
 * Splits "Sounds good. On Wed, … Name <a@b> wrote:" into the customer's text and the attribution,
 * so that the rules below see the attribution on a line of its own.
 */
function splitSameLineAttributions(lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    const split = isQuotedLine(line) ? null : splitSameLineAttribution(line.trim());
    if (split) out.push(split.before, line.trim().slice(split.before.length).trim());
    else out.push(line);
  }
  return out;
}

/**
 * Where the quoted history starts: the first signature, separator, list footer, header block,
 * device footer with text below it, or attribution that cuts. Attribution lines introducing a
 * ">" block are marked in `dropped` instead, so that inline answers below them survive.
 */
function findCut(lines: readonly string[], quoted: readonly boolean[], dropped: Uint8Array): number {
  const count = lines.length;
  let sawOwnText = false;
  let textAfter: Uint8Array | undefined;
  for (let i = 0; i < count; i++) {
    if (quoted[i]) continue;
    const trimmed = (lines[i] ?? '').trim();
    if (trimmed === '') continue;
    const ownTextBefore = sawOwnText;
    sawOwnText = true;
    if (SIG_DELIMITER.test(lines[i] ?? '') || separatorKind(trimmed) !== null || isListFooterStart(lines, i)) {
      return i;
    }
    if (headerBlockAt(lines, i)) {
      return i;
    }
    // "Sent from my iPhone" closes what the sender typed: unquoted text below it is the message
    // the client put under the reply (mobile clients often without an attribution).
    if (ownTextBefore && isDeviceFooter(trimmed) && (textAfter ??= unquotedTextAfter(lines, quoted))[i + 1] === 1) {
      return i;
    }
    const attribution = attributionAt(lines, i);
    if (!attribution) continue;
    const next = nextNonBlank(lines, i + attribution.lines);
    if (next < count && quoted[next]) {
      // "On … wrote:" introducing a ">" block: drop the attribution, let the ">" rule decide the
      // rest so that answers typed between quoted passages survive.
      for (let k = i; k < i + attribution.lines; k++) dropped[k] = 1;
      i += attribution.lines - 1;
      continue;
    }
    // Unquoted history below (Outlook, Yahoo) only counts for a strong attribution: a weak one
    // ("Your colleague wrote:") followed by the customer's own text is the customer's text. A weak
    // one with nothing after it (its quote was an HTML blockquote, already removed) or with a
    // header block or signature after it is a client's.
    if (attribution.strength === 'strong' || next >= count || SIG_DELIMITER.test(lines[next] ?? '') || headerBlockAt(lines, next)) {
      return i;
    }
  }
  return count;
}

function analyzePlain(raw: string): PlainAnalysis {
  const lines = splitSameLineAttributions(normalizePlain(raw).split('\n'));
  const count = lines.length;
  const usenet = usenetQuotedLines(lines);
  const quoted = lines.map((l, i) => isQuotedLine(l) || usenet[i] === 1);
  const dropped = new Uint8Array(count);
  const line = (i: number): string => lines[i] ?? '';

  // 1. Find where the quoted history starts ("cut"); drop attribution lines of ">" blocks.
  const cut = findCut(lines, quoted, dropped);

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
  //    The first kept line from the bottom that is not a footer ends the search.
  for (let i = end - 1; i >= 0; i--) {
    if (!keep[i]) continue;
    const trimmed = line(i).trim();
    if (trimmed === '') continue;
    if (trimmed.length > MAX_FOOTER_LINE || !isMobileFooter(trimmed)) break;
    keep[i] = false;
  }

  // 4. A one-line dash signature ("-Raj", "— Eleanor Whitfield") closing the new text.
  const keptIndexes: number[] = [];
  for (let i = 0; i < end; i++) if (keep[i]) keptIndexes.push(i);
  const signature = dashSignatureStart(keptIndexes.map((i) => line(i).trim()));
  if (signature >= 0) for (const i of keptIndexes.slice(signature)) keep[i] = false;

  // 5. Does new text follow a quoted line? (inline reply / bottom-post)
  let interleaved = false;
  let sawQuote = false;
  for (let i = 0; i < end && !interleaved; i++) {
    if (quoted[i]) sawQuote = true;
    else if (sawQuote && keep[i] && line(i).trim() !== '') interleaved = true;
  }

  return { reply: tidy(lines.filter((_, i) => keep[i])), interleaved };
}

/**
 * For each line i, 1 when unquoted text (not a footer or a separator line) starts at i or below it
 * before the end or the next quoted line. One backward pass, so that the footer rule stays linear.
 */
function unquotedTextAfter(lines: readonly string[], quoted: readonly boolean[]): Uint8Array {
  const after = new Uint8Array(lines.length + 1);
  for (let j = lines.length - 1; j >= 0; j--) {
    if (quoted[j]) continue; // stays 0: a quote below ends the search
    const trimmed = (lines[j] ?? '').trim();
    const filler = trimmed === '' || SEPARATOR_LINE.test(trimmed) || (trimmed.length <= MAX_FOOTER_LINE && isMobileFooter(trimmed));
    after[j] = filler ? (after[j + 1] ?? 0) : 1;
  }
  return after;
}

function nextNonBlank(lines: readonly string[], from: number): number {
  let i = from;
  while (i < lines.length && (lines[i] ?? '').trim() === '') i++;
  return i;
}

/**
 * A message that is only a forward (nothing written above the forwarded message): the forwarded
 * message is what the customer sends us, so its new text is returned, without the separator and
 * its header block. A forward is recognised by a forward separator ("---------- Forwarded message
 * ---------", "Begin forwarded message:", …) or by a quoted header block whose Subject starts with
 * a forward prefix ("Fwd:", "WG:", "TR:", …). Anything else (a quote-only reply) gives null.
 */
function forwardedText(source: string): string | null {
  let lines = normalizePlain(source).split('\n');
  let i = nextNonBlank(lines, 0);
  // Footers and separator lines above the forward ("Sent from my iPhone", "_____").
  while (i < lines.length) {
    const trimmed = (lines[i] ?? '').trim();
    if (!isMobileFooter(trimmed) && !SEPARATOR_LINE.test(trimmed)) break;
    i = nextNonBlank(lines, i + 1);
  }
  let forward = false;
  const kind = separatorKind((lines[i] ?? '').trim());
  if (kind === 'forward') forward = true;
  if (kind === 'forward' || kind === 'original') i = nextNonBlank(lines, i + 1);
  // Apple Mail quotes the whole forwarded message with ">"; a few words typed below it stay, after it.
  const rest = lines.slice(i);
  const quotedEnd = leadingQuoteEnd(rest);
  if (quotedEnd > 0) {
    lines = rest.map((l, k) => (k < quotedEnd ? l.replace(/^[ \t]*> ?/, '') : l));
    i = nextNonBlank(lines, 0);
  }
  const block = headerBlockAt(lines, i);
  if (block) {
    if (block.subject !== null && isForwardSubject(block.subject)) forward = true;
    // A header block opening the mail, with no separator above it and not a reply's ("Re: …"):
    // the sender pasted a whole message (headers and body) to show it to us.
    if (kind === null && i === nextNonBlank(lines, 0) && (block.subject === null || !isReplySubject(block.subject))) forward = true;
    i += block.length;
  } else {
    const attribution = attributionAt(lines, i);
    if (attribution?.strength === 'strong') i += attribution.lines;
  }
  if (!forward) return null;
  return analyzePlain(lines.slice(i).join('\n')).reply;
}

/**
 * A mail that is nothing but ">"-quoted lines, with no attribution or header block of a reply
 * anywhere: the sender quoted a text to show it to us (there is no reply around it), so the quoted
 * text, one level unquoted, is the message. Null for anything else.
 */
function quotedOnlyText(source: string): string | null {
  const lines = normalizePlain(source).split('\n');
  let quotedCount = 0;
  for (const l of lines) {
    const trimmed = l.trim();
    if (trimmed === '') continue;
    if (!isQuotedLine(l)) return null;
    quotedCount++;
  }
  if (quotedCount === 0) return null;
  const inner = lines.map((l) => l.replace(/^[ \t]*> ?/, ''));
  const first = nextNonBlank(inner, 0);
  if (attributionAt(inner, first) || headerBlockAt(inner, first) || separatorKind((inner[first] ?? '').trim()) !== null) return null;
  // A quote of a quote stays one level quoted: that is what the sender shows us.
  return analyzePlain(inner.join('\n')).reply || tidy(inner);
}

// A tracking mark Gmail extensions (Mailtrack, Streak) leave at the end of the text: "ᐧ" (U+1427).
// Trimmed by a loop, not a regex: "[\s…]+$" backtracks quadratically on a long run of spaces.
function withoutTrackingMark(line: string): string {
  if (!line.includes('\u1427')) return line;
  let end = line.length;
  while (end > 0) {
    const ch = line[end - 1] ?? '';
    if (ch !== '\u1427' && ch.trim() !== '') break;
    end--;
  }
  return line.slice(0, end);
}

/** The end of the ">"-quoted block that opens `lines` (blank lines inside it included), or 0. */
function leadingQuoteEnd(lines: readonly string[]): number {
  const first = nextNonBlank(lines, 0);
  if (first >= lines.length || !isQuotedLine(lines[first] ?? '')) return 0;
  let end = first;
  for (let k = first; k < lines.length; k++) {
    const l = lines[k] ?? '';
    if (isQuotedLine(l)) end = k + 1;
    else if (l.trim() !== '') break;
  }
  return end;
}

/** Trailing spaces removed, runs of blank lines collapsed to one, outer blank lines trimmed. */
function tidy(lines: string[]): string {
  return lines
    .map((l) => withoutTrackingMark(l).trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
