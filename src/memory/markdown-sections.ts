/**
 * Markdown read by a real CommonMark parser (markdown-it, with GFM tables and strikethrough) into
 * sections along its headings: each section has its heading path and its blocks as plain text
 * (paragraphs, lists, tables, code). Pure.
 *
 * Why markdown-it and not micromark/mdast: markdown-it already renders the replies, and on crafted
 * input it stays linear where micromark does not: 64 KB of `*a*a*a…` took micromark 45 s and
 * 64 KB of `>>>…` 50 s (attention and container resolution revisit earlier input), markdown-it
 * 0.1–0.8 s on every pattern tried (see bench/markdown-import.ts). The regular expressions this
 * replaces backtracked: a heading with a run of spaces cubically, a run of `[` quadratically.
 *
 * Containers nested deeper than `MAX_NESTING` levels (about 50 lists in lists) are markdown-it's
 * own cap, which keeps its recursion bounded: it skips what is inside (for a list, the rest of the
 * document), and a visible cut mark says so where it happened. No help-center article nests that deep.
 */
import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { cutMark, htmlToVisibleText } from '../mail/html-text.ts';

export interface MarkdownSection {
  /** The headings above the section, outermost first (empty before the first heading). */
  headings: string[];
  /** The section's blocks as plain text: a paragraph, a whole list, a table, a code block. */
  blocks: string[];
}

const MAX_NESTING = 100;
/** Where markdown-it's nesting cap skipped content. */
export const NESTING_CUT = cutMark(`Markdown nested deeper than ${MAX_NESTING / 2} levels, what is inside was not read`);
const CONTAINERS = new Set(['blockquote_open', 'bullet_list_open', 'ordered_list_open', 'list_item_open']);
/** Characters of one heading kept. */
const HEADING_MAX_CHARS = 200;

function parser(html: boolean): InstanceType<typeof MarkdownIt> {
  return new MarkdownIt('default', { html, linkify: false, typographer: false, maxNesting: MAX_NESTING });
}

// Markdown files: raw HTML is read as HTML (its visible text; comments and hidden elements drop).
const markdownParser = parser(true);
// Text rendered from an HTML page: a "<" in it was an entity, it is text.
const renderedTextParser = parser(false);

/**
 * The sections of a Markdown text. `renderedHtml`: the text came from an HTML page's rendering
 * (headings marked with `#`), so any `<` in it is text, not markup.
 */
export function markdownSections(text: string, renderedHtml = false): MarkdownSection[] {
  const tokens = (renderedHtml ? renderedTextParser : markdownParser).parse(text, {});
  const sections: MarkdownSection[] = [{ headings: [], blocks: [] }];
  const path: Array<{ level: number; text: string }> = [];
  const block = new BlockWriter();
  let cut = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === 'heading_open') {
      const level = Number(token.tag.slice(1));
      const heading = clip(
        inlineText(tokens[i + 1]?.children ?? [])
          .replace(/\s+/g, ' ')
          .trim(),
        HEADING_MAX_CHARS,
      );
      i += 2; // the heading's inline and close tokens
      if (heading === '') continue;
      block.flushInto(sections.at(-1)!);
      while (path.length > 0 && path.at(-1)!.level >= level) path.pop();
      path.push({ level, text: heading });
      sections.push({ headings: path.map((h) => h.text), blocks: [] });
      continue;
    }
    // A container opened at the last level has its content skipped (in a list, the rest too).
    if (!cut && token.level >= MAX_NESTING - 1 && CONTAINERS.has(token.type)) {
      cut = true;
      block.writeMark(NESTING_CUT);
    }
    block.take(token);
    if (block.depth === 0) block.flushInto(sections.at(-1)!);
  }
  block.flushInto(sections.at(-1)!);
  return sections;
}

/**
 * Gathers block tokens into plain-text blocks: a top-level paragraph or code block is one block;
 * a list, quote or table (a container) is one block of lines until it closes.
 */
class BlockWriter {
  /** Open containers (lists, quotes, tables). */
  depth = 0;
  private lines: string[] = [];
  /** Open lists, innermost last: whether ordered, for the items' markers. */
  private lists: boolean[] = [];
  private marker: string | null = null;
  private cells: string[] | null = null;

  take(token: Token): void {
    switch (token.type) {
      case 'bullet_list_open':
      case 'ordered_list_open':
        this.depth++;
        this.lists.push(token.type === 'ordered_list_open');
        return;
      case 'bullet_list_close':
      case 'ordered_list_close':
        this.depth--;
        this.lists.pop();
        return;
      case 'list_item_open':
        // An ordered item's `info` is its number as written ("1", "2"), its markup "." or ")".
        this.marker = this.lists.at(-1) ? `${token.info}${token.markup} ` : '- ';
        return;
      case 'blockquote_open':
      case 'table_open':
        this.depth++;
        return;
      case 'blockquote_close':
      case 'table_close':
        this.depth--;
        return;
      case 'tr_open':
        this.cells = [];
        return;
      case 'tr_close':
        if (this.cells) this.write(this.cells.join(' | '));
        this.cells = null;
        return;
      case 'inline':
        if (this.cells) this.cells.push(inlineText(token.children ?? []).trim());
        else this.write(inlineText(token.children ?? []));
        return;
      case 'fence':
      case 'code_block':
        this.write(token.content.replace(/\n$/, ''));
        return;
      case 'html_block':
        this.write(htmlToVisibleText(token.content, { limits: { maxChars: token.content.length } }));
        return;
      default:
        return;
    }
  }

  /** Ends the block under way (if any) as one of the section's blocks. */
  flushInto(section: MarkdownSection): void {
    const text = this.lines.join('\n').trim();
    if (text !== '') section.blocks.push(text);
    this.lines = [];
  }

  /** A line of its own, outside any list item. */
  writeMark(text: string): void {
    this.lines.push(text);
  }

  private write(text: string): void {
    if (text.trim() === '') return;
    const indent = '  '.repeat(Math.max(0, this.lists.length - 1));
    let first = true;
    for (const line of text.split('\n')) {
      const prefix = first && this.marker !== null ? `${indent}${this.marker}` : this.lists.length > 0 ? `${indent}  ` : '';
      this.lines.push(`${prefix}${line}`.trimEnd());
      first = false;
    }
    this.marker = null;
  }
}

/** An inline run's text: emphasis and code marks gone, links as their text, images as their alt text, inline HTML tags dropped. */
function inlineText(children: readonly Token[]): string {
  let out = '';
  for (const child of children) {
    if (child.type === 'text' || child.type === 'code_inline') out += child.content;
    else if (child.type === 'softbreak' || child.type === 'hardbreak') out += '\n';
    else if (child.type === 'image') out += inlineText(child.children ?? []);
  }
  return out;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
