/**
 * The reply as a mail client would send it: a plain-text part and an HTML part, both built from the
 * text the model (or a reviewer) wrote, which is plain text or light Markdown (paragraphs, lists,
 * **bold**, *italic*, `code`, links); then the mailbox's signature after the standard "-- "
 * delimiter, then the quoted original. Pure.
 *
 * Safe by construction: markdown-it with raw HTML off (every `<` is escaped), no images, tables or
 * headings, links only to http(s) and mailto (anything else stays text), nesting capped. Markdown
 * is rendered up to `MARKDOWN_MAX_CHARS`; a longer text (no real reply is that long), or one nested
 * deeper than markdown-it reads, is sent as escaped text with its line breaks, so the work stays
 * linear and nothing is lost whatever the input.
 */
import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { cleanDisplayName } from './addresses.ts';

/** The message being answered, quoted below the reply. */
export interface QuotedOriginal {
  date: Date;
  fromName: string | null;
  fromAddress: string;
  /** Its full text (as the customer sent it, quoted history included); cut to `QUOTE_MAX_CHARS`. */
  text: string;
}

export interface ReplyRenderInput {
  /** What the model or the reviewer wrote: plain text or light Markdown. */
  body: string;
  /** The mailbox's signature, plain text (escaped in HTML); none when absent or blank. */
  signature?: string | undefined;
  /** The answered message, when the original is quoted (REPLY_QUOTE_ORIGINAL). */
  quote?: QuotedOriginal | null | undefined;
}

export interface RenderedReply {
  text: string;
  html: string;
}

/** Longer bodies skip Markdown: escaped text, line breaks kept. */
export const MARKDOWN_MAX_CHARS = 50_000;
/** Characters and lines of the original quoted below the reply; the rest is cut with a mark. */
export const QUOTE_MAX_CHARS = 20_000;
export const QUOTE_MAX_LINES = 400;
/** Characters of signature kept. */
export const SIGNATURE_MAX_CHARS = 2_000;

/**
 * markdown-it stops reading blocks nested this deep (and drops what is inside): a text that gets
 * near it is sent as escaped text instead, so nothing is lost.
 */
const MAX_NESTING = 20;

const md = new MarkdownIt('default', {
  html: false,
  linkify: true,
  typographer: false,
  breaks: true,
  maxNesting: MAX_NESTING,
});
// Light Markdown only. Setext headings would turn a line above "---" into a title, reference
// definitions would make a line like "[1]: http://…" vanish from the text.
md.disable(['image', 'table', 'heading', 'lheading', 'html_block', 'html_inline', 'reference', 'strikethrough']);
// Bare URLs need their scheme (no "example.com" guessing); addresses become mailto links.
md.linkify.set({ fuzzyLink: false, fuzzyIP: false, fuzzyEmail: true });

const SAFE_LINK = /^(?:https?:\/\/|mailto:)/i;
md.validateLink = (url: string): boolean => SAFE_LINK.test(url.trim());

const defaultLinkOpen = md.renderer.rules.link_open;
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('rel', 'noopener noreferrer');
  return defaultLinkOpen ? defaultLinkOpen(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Line endings as \n, and no control characters but tab and newline. */
function normaliseText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
}

/** Escaped text with its line breaks: for text that is not Markdown (signature, quote, an over-long body). */
function textToHtml(text: string): string {
  return escapeHtml(text).replace(/\n/g, '<br>\n');
}

/**
 * The plain-text part from markdown-it's tokens: markers removed (`**`, `*`, backticks, fences),
 * list items as "- " or "1. ", quotes as "> ", a link as its text followed by `<url>` (unless the
 * text is the URL).
 */
function tokensToText(tokens: readonly Token[]): string {
  const out: string[] = [];
  const prefixes: string[] = [];
  const lists: Array<{ ordered: boolean; next: number }> = [];
  let marker: string | null = null;
  let separate = false;

  const emit = (text: string): void => {
    if (separate && out.length > 0) out.push(prefixes.join('').trimEnd());
    separate = false;
    for (const line of text.split('\n')) {
      if (marker !== null) {
        out.push(prefixes.slice(0, -1).join('') + marker + line);
        marker = null;
      } else {
        out.push((prefixes.join('') + line).trimEnd() === '' ? '' : prefixes.join('') + line);
      }
    }
  };

  for (const token of tokens) {
    switch (token.type) {
      case 'paragraph_open':
        if (!token.hidden) separate = true;
        break;
      case 'inline':
        emit(inlineToText(token.children ?? []));
        break;
      case 'bullet_list_open':
      case 'ordered_list_open': {
        // A nested list follows its item's text directly.
        if (lists.length === 0) separate = true;
        const start = Number(token.attrGet('start') ?? 1);
        lists.push({ ordered: token.type === 'ordered_list_open', next: Number.isFinite(start) ? start : 1 });
        break;
      }
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        if (lists.length === 0) separate = true;
        break;
      case 'list_item_open': {
        const list = lists.at(-1);
        const m = list?.ordered ? `${list.next++}${token.markup || '.'} ` : '- ';
        if (marker !== null) emit('');
        marker = m;
        prefixes.push(' '.repeat(m.length));
        break;
      }
      case 'list_item_close':
        // An empty item still shows its marker.
        if (marker !== null) emit('');
        prefixes.pop();
        break;
      case 'blockquote_open':
        if (marker === null) separate = true;
        prefixes.push('> ');
        break;
      case 'blockquote_close':
        prefixes.pop();
        separate = true;
        break;
      case 'code_block':
      case 'fence':
        if (marker === null) separate = true;
        emit(token.content.replace(/\n$/, ''));
        separate = true;
        break;
      case 'hr':
        separate = true;
        emit('----');
        separate = true;
        break;
      default:
        break;
    }
  }
  return out.join('\n').trim();
}

function inlineToText(children: readonly Token[]): string {
  let text = '';
  const links: Array<{ href: string; start: number }> = [];
  for (const child of children) {
    switch (child.type) {
      case 'text':
      case 'code_inline':
        text += child.content;
        break;
      case 'softbreak':
      case 'hardbreak':
        text += '\n';
        break;
      case 'link_open':
        links.push({ href: String(child.attrGet('href') ?? ''), start: text.length });
        break;
      case 'link_close': {
        const link = links.pop();
        if (!link) break;
        const label = text.slice(link.start);
        const shown = link.href.replace(/^mailto:/i, '');
        // Autolinks and bare URLs show themselves already.
        if (child.markup !== 'linkify' && child.markup !== 'autolink' && label !== shown && label !== link.href) text += ` <${link.href}>`;
        break;
      }
      default:
        break;
    }
  }
  return text;
}

function renderBody(body: string): { text: string; html: string } {
  const clean = normaliseText(body).trim();
  if (clean.length > MARKDOWN_MAX_CHARS) return { text: clean, html: `<div>${textToHtml(clean)}</div>` };
  const tokens = md.parse(clean, {});
  if (tokens.some((t) => t.level >= MAX_NESTING - 2)) return { text: clean, html: `<div>${textToHtml(clean)}</div>` };
  return { text: tokensToText(tokens), html: md.renderer.render(tokens, md.options, {}) };
}

/** A link as the reply's HTML part will carry it: the text a reader sees and where it goes. */
export interface ReplyLink {
  text: string;
  href: string;
}

/**
 * The links of a reply body, read by the same parser and rules as `renderReply` (so the outbound
 * checks see exactly the links that will be sent): Markdown links, autolinks and bare URLs to
 * http(s) and mailto. None for a body rendered as escaped text.
 */
export function replyLinks(body: string): ReplyLink[] {
  const clean = normaliseText(body).trim();
  if (clean.length > MARKDOWN_MAX_CHARS) return [];
  const tokens = md.parse(clean, {});
  if (tokens.some((t) => t.level >= MAX_NESTING - 2)) return [];
  const links: ReplyLink[] = [];
  for (const block of tokens) {
    const open: Array<{ href: string; text: string }> = [];
    for (const child of block.children ?? []) {
      if (child.type === 'link_open') open.push({ href: String(child.attrGet('href') ?? ''), text: '' });
      else if (child.type === 'link_close') {
        const link = open.pop();
        if (link) links.push(link);
      } else if (child.type === 'text' || child.type === 'code_inline') for (const link of open) link.text += child.content;
    }
  }
  return links;
}

/** The signature as sent: plain text, trimmed, capped; empty when there is none. */
function cleanSignature(signature: string | undefined): string {
  const clean = normaliseText(signature ?? '')
    .trim()
    .slice(0, SIGNATURE_MAX_CHARS);
  // A signature that carries its own delimiter keeps only one.
  return clean.replace(/^--[ \t]*\n/, '').trim();
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "On Tue, 1 Dec 2026 at 20:03 UTC, Ann Smith <ann@example.com> wrote:" */
export function quoteHeader(quote: Pick<QuotedOriginal, 'date' | 'fromName' | 'fromAddress'>): string {
  const d = quote.date;
  const valid = !Number.isNaN(d.getTime());
  const pad = (n: number) => String(n).padStart(2, '0');
  const when = valid
    ? `${DAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} at ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`
    : 'an unknown date';
  const name = cleanDisplayName(quote.fromName)?.replace(/[<>"]/g, '');
  const address = normaliseText(quote.fromAddress)
    .replace(/[\s<>]/g, '')
    .slice(0, 320);
  return `On ${when}, ${name ? `${name} <${address}>` : address} wrote:`;
}

/** The original's text as quoted: line endings normalised, cut to the caps with a mark. */
export function quotedLines(text: string): string[] {
  let clean = normaliseText(text).slice(0, QUOTE_MAX_CHARS + 1);
  const cut = clean.length > QUOTE_MAX_CHARS;
  if (cut) clean = clean.slice(0, QUOTE_MAX_CHARS);
  let lines = clean.replace(/\s+$/, '').split('\n');
  const tooMany = lines.length > QUOTE_MAX_LINES;
  if (tooMany) lines = lines.slice(0, QUOTE_MAX_LINES);
  if (cut || tooMany) lines.push('[…]');
  return lines;
}

/** The reply's two parts: body, signature, quoted original. */
export function renderReply(input: ReplyRenderInput): RenderedReply {
  const body = renderBody(input.body);
  const signature = cleanSignature(input.signature);
  const text: string[] = [body.text];
  const html: string[] = [`<div dir="auto">${body.html}</div>`];
  if (signature) {
    text.push('', `-- \n${signature}`);
    html.push(`<div class="signature" dir="auto"><br>-- <br>\n${textToHtml(signature)}</div>`);
  }
  if (input.quote) {
    const header = quoteHeader(input.quote);
    const lines = quotedLines(input.quote.text);
    text.push('', header, ...lines.map((line) => (line === '' ? '>' : `> ${line}`)));
    html.push(
      `<div class="quote"><br>${escapeHtml(header)}<br>\n<blockquote type="cite" style="margin:0 0 0 .8ex;border-left:1px solid #ccc;padding-left:1ex">${textToHtml(lines.join('\n'))}</blockquote></div>`,
    );
  }
  return {
    text: `${text.join('\n')}\n`,
    html: `<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head><body>\n${html.join('\n')}\n</body></html>\n`,
  };
}
