/**
 * The knowledge base's pure side: reading a document (Markdown, HTML, plain text, or the text a
 * PDF gave) into passages along its headings, the text full-text search reads, the search terms
 * of a question, and how well a passage covers a question. No I/O; linear in the (capped) input.
 *
 * A passage is one section under its heading path ("Billing > Refunds > Refund window"); a section
 * longer than `maxPassageTokens` is split at paragraph breaks (a paragraph longer than that at
 * sentence ends, then cut), and each part keeps the heading path.
 */
import { htmlToVisibleText, type HtmlDocument, type HtmlNode } from '../mail/html-text.ts';
import { markdownSections, type MarkdownSection } from './markdown-sections.ts';
import { foldText } from './text-fold.ts';
import { countTokens, truncateToTokens } from './tokens.ts';

export const KB_FORMATS = ['markdown', 'html', 'text', 'pdf'] as const;
export type KbFormat = (typeof KB_FORMATS)[number];

export interface KbLimits {
  /** Characters of a document's text read; the rest is cut. */
  maxChars: number;
  /** A passage holds at most this many tokens. */
  maxPassageTokens: number;
  /** Passages kept per document. */
  maxPassages: number;
}

export const DEFAULT_KB_LIMITS: KbLimits = { maxChars: 2_000_000, maxPassageTokens: 350, maxPassages: 2_000 };

export interface KbPassageDraft {
  ordinal: number;
  /** The headings above the passage, outermost first, joined with " > " (the document title when none). */
  titlePath: string;
  text: string;
  /** The text as full-text search reads it (see `searchableText`). */
  searchText: string;
  tokens: number;
}

export interface ParsedKbDocument {
  title: string;
  /** The document's own language (Markdown front matter `lang:`, `<html lang>`), when it says. */
  lang: string | null;
  /** Tags from Markdown front matter (`tags: [a, b]` or `tags: a, b`). */
  tags: string[];
  passages: KbPassageDraft[];
}

/** The format a file's name says, or null for a file `kb import` skips. */
export function kbFormatOf(fileName: string): KbFormat | null {
  const ext = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase();
  if (ext === 'md' || ext === 'markdown') return 'markdown';
  if (ext === 'html' || ext === 'htm') return 'html';
  if (ext === 'txt' || ext === 'text') return 'text';
  if (ext === 'pdf') return 'pdf';
  return null;
}

/** Reads a document's text into passages. `fallbackTitle` (the file name) names a document without a title. */
export function parseKbDocument(
  content: string,
  format: KbFormat,
  fallbackTitle: string,
  limits: KbLimits = DEFAULT_KB_LIMITS,
): ParsedKbDocument {
  let text = content.length > limits.maxChars ? content.slice(0, limits.maxChars) : content;
  text = text.replace(/\r\n?/g, '\n');
  let meta: FrontMatter = { title: null, lang: null, tags: [] };
  if (format === 'markdown') {
    ({ meta, body: text } = frontMatter(text));
  } else if (format === 'html') {
    meta = { title: htmlTitle(text), lang: htmlLang(text), tags: [] };
    text = htmlToVisibleText(text, { prune: markHeadings, limits: { maxChars: limits.maxChars } });
  }
  const sections = format === 'text' || format === 'pdf' ? plainSections(text) : markdownSections(text, format === 'html');
  const firstHeading = sections.find((s) => s.headings.length > 0)?.headings[0] ?? null;
  const firstBlock = sections.find((s) => s.blocks.length > 0)?.blocks[0] ?? '';
  const title = clip(meta.title ?? firstHeading ?? firstLineTitle(firstBlock) ?? fallbackTitle, 200);
  const passages: KbPassageDraft[] = [];
  for (const section of sections) {
    // The document's own title heading adds nothing to a path that starts with it.
    const headings = section.headings.length > 0 ? section.headings : [title];
    const titlePath = clip(headings.join(' > '), 500);
    for (const part of chunk(section.blocks, limits.maxPassageTokens, limits.maxPassages - passages.length)) {
      if (passages.length >= limits.maxPassages) break;
      passages.push({
        ordinal: passages.length,
        titlePath,
        text: part,
        searchText: searchableText(`${titlePath}\n${part}`),
        tokens: countTokens(part),
      });
    }
  }
  return { title, lang: meta.lang, tags: meta.tags, passages };
}

interface FrontMatter {
  title: string | null;
  lang: string | null;
  tags: string[];
}

function frontMatter(text: string): { meta: FrontMatter; body: string } {
  const meta: FrontMatter = { title: null, lang: null, tags: [] };
  const match = /^---\n([\s\S]{0,4000}?)\n---\n/.exec(text);
  if (!match) return { meta, body: text };
  for (const line of match[1]!.split('\n')) {
    const kv = /^(title|lang|language|tags):\s*(.*)$/i.exec(line.trim());
    if (!kv) continue;
    const key = kv[1]!.toLowerCase();
    const value = kv[2]!.trim().replace(/^["']|["']$/g, '');
    if (key === 'title') meta.title = value || null;
    else if (key === 'tags') meta.tags = normaliseTags(value.replace(/^\[|\]$/g, '').split(','));
    else meta.lang = normaliseLang(value);
  }
  return { meta, body: text.slice(match[0].length) };
}

/** `en`, `EN`, `en-GB` → `en`; anything else → null. */
export function normaliseLang(value: string | null | undefined): string | null {
  const code = /^([a-z]{2})(?:[-_][a-z0-9]+)?$/i.exec((value ?? '').trim())?.[1];
  return code ? code.toLowerCase() : null;
}

/** Tags as lower-case snake_case words, at most ten, each at most 40 characters. */
export function normaliseTags(values: readonly string[]): string[] {
  const tags = values
    .map((t) =>
      t
        .trim()
        .toLowerCase()
        .replace(/^["']|["']$/g, '')
        .replace(/[^\p{L}\p{N}]+/gu, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 40),
    )
    .filter((t) => t.length > 0);
  return [...new Set(tags)].slice(0, 10);
}

/** Plain text and PDF text have no headings the reader can trust: one section of paragraphs, split by size. */
function plainSections(text: string): MarkdownSection[] {
  const blocks: string[] = [];
  let current: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      if (current.length > 0) blocks.push(current.join('\n'));
      current = [];
    } else current.push(line.trimEnd());
  }
  if (current.length > 0) blocks.push(current.join('\n'));
  return [{ headings: [], blocks }];
}

/** A section's blocks as passages: blocks joined up to `maxTokens`, a longer block cut at sentence ends. */
function chunk(blocks: readonly string[], maxTokens: number, maxParts: number): string[] {
  const parts: string[] = [];
  let part = '';
  let partTokens = 0;
  for (const paragraph of blocks) {
    if (parts.length >= maxParts) break;
    const tokens = countTokens(paragraph);
    if (part && partTokens + tokens > maxTokens) {
      parts.push(part);
      part = '';
      partTokens = 0;
    }
    if (tokens > maxTokens) {
      for (const piece of splitLong(paragraph, maxTokens, maxParts - parts.length)) parts.push(piece);
      continue;
    }
    part = part ? `${part}\n\n${paragraph}` : paragraph;
    partTokens += tokens;
  }
  if (part) parts.push(part);
  return parts;
}

function splitLong(paragraph: string, maxTokens: number, maxPieces: number): string[] {
  const pieces: string[] = [];
  let rest = paragraph;
  while (rest.length > 0 && pieces.length < maxPieces) {
    const head = truncateToTokens(rest, maxTokens);
    // Prefer to end at the last sentence end inside the head.
    const end = Math.max(head.lastIndexOf('. '), head.lastIndexOf('.\n'), head.lastIndexOf('。'));
    const cut = end > head.length / 2 ? end + 1 : head.length;
    if (cut === 0) break;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  return pieces.filter((p) => p.length > 0);
}

function firstLineTitle(text: string): string | null {
  const line = text
    .split('\n', 20)
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return line && line.length <= 120 ? line : null;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function htmlTitle(html: string): string | null {
  const title = /<title[^>]{0,200}>([^<]{1,300})<\/title>/i.exec(html.slice(0, 20_000))?.[1]?.trim();
  return title ? decodeBasicEntities(title) : null;
}

function htmlLang(html: string): string | null {
  return normaliseLang(/<html[^>]{0,500}?\blang=["']?([a-zA-Z_-]{2,12})/i.exec(html.slice(0, 20_000))?.[1]);
}

function decodeBasicEntities(text: string): string {
  return text
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
}

/** Before rendering, each h1-h6 gets a Markdown heading mark on its first text, so sections survive. */
function markHeadings(document: HtmlDocument): void {
  const stack: HtmlNode[] = [...document.children];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!('children' in node)) continue;
    const level = 'name' in node ? /^h([1-6])$/.exec(node.name)?.[1] : undefined;
    if (level) {
      const first = firstText(node);
      if (first) first.data = `${'#'.repeat(Number(level))} ${first.data.trimStart()}`;
      continue;
    }
    stack.push(...node.children);
  }
}

function firstText(root: HtmlNode): { data: string } | null {
  const stack: HtmlNode[] = [root];
  while (stack.length > 0) {
    const node = stack.shift()!;
    if (node.type === 'text' && 'data' in node && node.data.trim() !== '') return node as { data: string };
    if ('children' in node) stack.unshift(...node.children);
  }
  return null;
}

// Scripts written without spaces: full-text search sees one "word" per run, so runs are split into
// overlapping character bigrams (the same is done to questions), which matches like a trigram
// index would without needing an extension.
const UNSPACED_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\u30fc]+/gu;

/** Text as full-text search reads it: folded, CJK runs as bigrams. */
export function searchableText(text: string): string {
  return foldText(text).replace(UNSPACED_RUN, (run) => ` ${bigrams(run).join(' ')} `);
}

function bigrams(run: string): string[] {
  const chars = [...run];
  if (chars.length < 2) return chars;
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

// Words that say nothing about what is asked, in the fixture languages; dropped from questions.
const STOPWORDS = new Set(
  (
    'a an and are as at be but by can could do does for from have hello hi how i if in is it its me my no not of on or our please ' +
    'so that the their them there this to us was we what when where which who why will with would you your thanks thank regards best dear ' +
    'der die das und ist ich wie kann ein eine einen mit von zu für auf nicht es sie wir ihr mein meine bitte danke hallo grüße ' +
    'le la les et est je comment un une des du de pour sur pas il elle nous vous mon ma mes merci bonjour cordialement ' +
    'el los las y es yo cómo como un una unos para por con no mi mis gracias hola saludos que qué en se lo'
  )
    .split(' ')
    .map(foldText),
);

/** A question's search terms: folded words (CJK as bigrams), stopwords and one-letter words dropped, at most `max`. */
export function kbQueryTerms(question: string, max = 40): string[] {
  const words = searchableText(question.slice(0, 4_000)).match(/[\p{L}\p{N}]+/gu) ?? [];
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const word of words) {
    if (seen.has(word) || STOPWORDS.has(word) || (word.length < 2 && !/[^\p{Script=Latin}\p{N}]/u.test(word))) continue;
    seen.add(word);
    terms.push(word);
    if (terms.length >= max) break;
  }
  return terms;
}

/** The share of a question's terms that occur in a passage's search text (prefix matches count: "export" in "exporting"). */
export function termCoverage(terms: readonly string[], searchText: string): number {
  if (terms.length === 0) return 0;
  const words = new Set(searchText.match(/[\p{L}\p{N}]+/gu) ?? []);
  const prefixes = [...words];
  let hits = 0;
  for (const term of terms) {
    const stem = term.length > 5 ? term.slice(0, 5) : term;
    if (words.has(term) || (term.length > 3 && prefixes.some((w) => w.startsWith(stem)))) hits++;
  }
  return hits / terms.length;
}

/** A passage as the reply context and the providers see it. */
export interface KnowledgePassage {
  id: string;
  title: string;
  titlePath: string;
  text: string;
  /** The search's rank score (higher is better); only the order matters. */
  score: number;
}

/** What the reply turn searches with: the subject, the newest email (capped), the thread's open items and intent. */
export function knowledgeQuery(input: {
  subject: string;
  latestText: string;
  openItems: readonly string[];
  currentIntent: string;
  tags: readonly string[];
}): string {
  return [
    input.subject,
    input.latestText.slice(0, 2_000),
    ...input.openItems.slice(0, 5),
    input.currentIntent.replace(/_/g, ' '),
    ...input.tags.slice(0, 5).map((t) => t.replace(/_/g, ' ')),
  ]
    .filter((s) => s.trim() !== '')
    .join('\n');
}
