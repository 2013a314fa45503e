// Converts an HTML mail body to the plain text a person would actually see in a mail client.
// Hidden content (hidden/aria-hidden, hiding inline styles, simple hiding rules in <style> sheets)
// is dropped. Pure: no I/O. Never throws.
//
// Bounded work on hostile markup: the input is cut at `maxChars`; the tree is built by our own
// linear tree builder on htmlparser2's tokenizer (htmlparser2's Parser keeps its open-element stack
// with Array#unshift/shift and searches it with indexOf, so its cost grows with the square of the
// nesting depth: 300,000 nested <div>s took about 100 s); elements nested deeper than `maxDepth`
// are flattened (their text is kept, their structure is not); building stops after `maxElements`
// elements and rendering after `maxOutputChars` characters, each leaving a visible cut mark. Every
// walk over the tree is iterative, so no nesting can overflow the call stack.
import { DomHandler, ElementType, Tokenizer, type QuoteType, type TokenizerCallbacks } from 'htmlparser2';
import { type getAttributeValue } from 'domutils';

export type HtmlDocument = DomHandler['root'];
export type HtmlNode = HtmlDocument['children'][number];
export type HtmlElement = Parameters<typeof getAttributeValue>[0];

export interface HtmlLimits {
  /** Characters of HTML read; the rest is cut. A safety net: the mail parser already cuts HTML at 2,000,000. */
  maxChars: number;
  /** Elements nested deeper than this are flattened: their text is kept, their nesting is not. */
  maxDepth: number;
  /** Elements built; the rest of the document is not read. */
  maxElements: number;
  /** Characters of rendered text. */
  maxOutputChars: number;
}

export const DEFAULT_HTML_LIMITS: HtmlLimits = {
  maxChars: 8_000_000,
  maxDepth: 1_000,
  maxElements: 200_000,
  maxOutputChars: 1_000_000,
};

export interface HtmlToTextOptions {
  /** Called with the parsed document before rendering; may detach nodes (e.g. quoted history). */
  prune?: (document: HtmlDocument) => void;
  limits?: Partial<HtmlLimits>;
}

/** The rendered text and whether (and why) part of the HTML was not rendered. */
export interface VisibleText {
  text: string;
  /** Null when everything was rendered; otherwise which cap cut it. */
  cut: string | null;
}

// Zero-width, bidi-control and soft-hyphen characters. U+034F (combining grapheme joiner) and
// U+180E are not in the brief's list but marketing preheaders pad with them for the same purpose.
// The combining grapheme joiner sits in the class on purpose (it is stripped alone, never as part
// of a grapheme), which is exactly what this lint rule warns about.
// eslint-disable-next-line no-misleading-character-class
const INVISIBLE_CHARS = /[\u00AD\u034F\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

/** Removes zero-width, bidi-control and soft-hyphen characters. */
export function stripInvisibleChars(text: string): string {
  return text.replace(INVISIBLE_CHARS, '');
}

/** The line appended to text that a cap cut short, so a reader knows more was there. */
export function cutMark(reason: string): string {
  return `[… cut here: ${reason}]`;
}

/** The visible text of an HTML body, with a cut mark as its last line when a cap cut it short. */
export function htmlToVisibleText(html: string, options: HtmlToTextOptions = {}): string {
  const { text, cut } = htmlToVisibleTextWithCut(html, options);
  if (cut === null) return text;
  return text === '' ? cutMark(cut) : `${text}\n\n${cutMark(cut)}`;
}

/** Like `htmlToVisibleText`, but reports a cut separately instead of marking the text. */
export function htmlToVisibleTextWithCut(html: string, options: HtmlToTextOptions = {}): VisibleText {
  const limits = { ...DEFAULT_HTML_LIMITS, ...options.limits };
  try {
    const { document, cut: parseCut } = parseBounded(html, limits);
    // Style sheets are read before pruning: in a mail client every <style> in the message applies.
    const hidingRules = collectHidingRules(document);
    options.prune?.(document);
    const { text, cut: renderCut } = renderDocument(document, hidingRules, limits.maxOutputChars);
    return { text, cut: parseCut ?? renderCut };
  } catch {
    // Defensive only: the renderer is not expected to throw, but the contract is "never throws".
    const input = html.slice(0, limits.maxChars);
    return { text: finish(stripTagsCrudely(input).slice(0, limits.maxOutputChars).split('\n')), cut: null };
  }
}

/** Parses HTML into a DOM (domhandler nodes, as htmlparser2's `parseDocument` builds) within `limits`. */
export function parseHtmlDocument(html: string, limits: Partial<HtmlLimits> = {}): { document: HtmlDocument; cut: string | null } {
  return parseBounded(html, { ...DEFAULT_HTML_LIMITS, ...limits });
}

function parseBounded(html: string, limits: HtmlLimits): { document: HtmlDocument; cut: string | null } {
  let input = html;
  let cut: string | null = null;
  if (input.length > limits.maxChars) {
    input = sliceWhole(input, limits.maxChars);
    cut = `HTML longer than ${limits.maxChars.toLocaleString('en-US')} characters`;
  }
  const builder = new BoundedTreeBuilder(input, limits);
  builder.run();
  return { document: builder.handler.root, cut: builder.cut ?? cut };
}

/** The first `max` UTF-16 units of `text`, one fewer when that would split a surrogate pair. */
export function sliceWhole(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

// ---------------------------------------------------------------------------------------------
// Tree building: htmlparser2's tree rules (implied end tags, void elements, foreign content) on an
// open-element stack whose top is its END, so opening and closing an element is O(1).
// ---------------------------------------------------------------------------------------------

const P_TAG = new Set(['p']);
const HEADING_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p']);
const FORM_TAGS = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const TABLE_SECTION_TAGS = new Set(['thead', 'tbody']);
const DD_DT_TAGS = new Set(['dd', 'dt']);
const RT_RP_TAGS = new Set(['rt', 'rp']);

// Opening the key closes any open elements of the value set on top of the stack (htmlparser2 12).
const OPEN_IMPLIES_CLOSE = new Map<string, ReadonlySet<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['a', new Set(['a'])],
  ['li', new Set(['li'])],
  ['p', P_TAG],
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((h) => [h, HEADING_TAGS] as const),
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((t) => [t, FORM_TAGS] as const),
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', DD_DT_TAGS],
  ['dt', DD_DT_TAGS],
  ...[
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((t) => [t, P_TAG] as const),
  ['rt', RT_RP_TAGS],
  ['rp', RT_RP_TAGS],
  ['tbody', TABLE_SECTION_TAGS],
  ['tfoot', TABLE_SECTION_TAGS],
]);

const VOID_ELEMENTS = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);

// SVG and MathML switch the tokenizer to foreign content (self-closing tags, CDATA as text);
// HTML integration points switch it back. SVG element names get their camel case back, as in
// htmlparser2 (which is why "foreignObject" is written so here).
const FOREIGN_ELEMENTS = new Set(['math', 'svg']);
const INTEGRATION_ELEMENTS = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignObject', 'desc', 'title']);
const SVG_NAMES = new Map(
  [
    'altGlyph',
    'altGlyphDef',
    'altGlyphItem',
    'animateColor',
    'animateMotion',
    'animateTransform',
    'clipPath',
    'feBlend',
    'feColorMatrix',
    'feComponentTransfer',
    'feComposite',
    'feConvolveMatrix',
    'feDiffuseLighting',
    'feDisplacementMap',
    'feDistantLight',
    'feDropShadow',
    'feFlood',
    'feFuncA',
    'feFuncB',
    'feFuncG',
    'feFuncR',
    'feGaussianBlur',
    'feImage',
    'feMerge',
    'feMergeNode',
    'feMorphology',
    'feOffset',
    'fePointLight',
    'feSpecularLighting',
    'feSpotLight',
    'feTile',
    'feTurbulence',
    'foreignObject',
    'glyphRef',
    'linearGradient',
    'radialGradient',
    'textPath',
  ].map((name) => [name.toLowerCase(), name]),
);

interface OpenElement {
  name: string;
  attribs: Record<string, string>;
  /**
   * structural: in the DOM at its own depth. flat: nested deeper than the cap; built only once text
   * arrives in it, as a child of the deepest structural element (never of another flattened one).
   * none: not built (inside content that is never shown).
   */
  kind: 'structural' | 'flat' | 'none';
  /** A flattened element whose content is never shown: everything in it is dropped while it is open. */
  hides: boolean;
  foreign: 'svg' | 'math' | 'html' | null;
}

class BoundedTreeBuilder implements TokenizerCallbacks {
  readonly handler = new DomHandler();
  cut: string | null = null;
  private readonly tokenizer: Tokenizer;
  private readonly open: OpenElement[] = [];
  /** How many open elements have each name: a close tag with none open costs nothing. */
  private readonly openCount = new Map<string, number>();
  private readonly foreign: Array<'svg' | 'math' | 'html'> = [];
  private flatOpen: OpenElement | null = null;
  private hiding = 0;
  private elements = 0;
  private tagName = '';
  private attribs: Record<string, string> | null = null;
  private attribName = '';
  private attribValue = '';
  private stopped = false;

  constructor(
    private readonly input: string,
    private readonly limits: HtmlLimits,
  ) {
    this.tokenizer = new Tokenizer({ xmlMode: false, decodeEntities: true }, this);
  }

  run(): void {
    this.tokenizer.write(this.input);
    if (!this.stopped) this.tokenizer.end();
    while (this.open.length > 0) this.pop();
  }

  isInForeignContext(): boolean {
    const top = this.foreign[this.foreign.length - 1];
    return top === 'svg' || top === 'math';
  }

  ontext(start: number, endIndex: number): void {
    this.text(this.input.slice(start, endIndex));
  }

  ontextentity(codepoint: number): void {
    this.text(String.fromCodePoint(codepoint));
  }

  onopentagname(start: number, endIndex: number): void {
    const name = this.readTagName(start, endIndex);
    this.tagName = name;
    this.attribs = null;
    if (name === 'form' && (this.openCount.get('form') ?? 0) > 0) {
      this.tagName = ''; // a second <form> is ignored, as in browsers
      return;
    }
    const closes = OPEN_IMPLIES_CLOSE.get(name);
    if (closes) {
      while (this.open.length > 0 && closes.has(this.open[this.open.length - 1]!.name)) this.pop();
    }
    this.attribs = {};
  }

  onattribname(start: number, endIndex: number): void {
    this.attribName = this.input.slice(start, endIndex).toLowerCase();
  }

  onattribdata(start: number, endIndex: number): void {
    this.attribValue += this.input.slice(start, endIndex);
  }

  onattribentity(codepoint: number): void {
    this.attribValue += String.fromCodePoint(codepoint);
  }

  onattribend(_quote: QuoteType, _endIndex: number): void {
    // The first of repeated attributes wins; "__proto__" must not become the object's prototype.
    if (this.attribs && this.attribName !== '__proto__' && !Object.hasOwn(this.attribs, this.attribName)) {
      this.attribs[this.attribName] = this.attribValue;
    }
    this.attribValue = '';
  }

  onopentagend(): void {
    this.endOpenTag();
  }

  onselfclosingtag(): void {
    const name = this.tagName;
    this.endOpenTag();
    // In HTML "<div/>" opens a div; only foreign content (SVG, MathML, "<svg/>" itself) has
    // self-closing tags.
    if (this.isInForeignContext() && name !== '' && this.open[this.open.length - 1]?.name === name) this.pop();
  }

  onclosetag(start: number, endIndex: number): void {
    const name = this.readTagName(start, endIndex);
    if (!VOID_ELEMENTS.has(name)) {
      if ((this.openCount.get(name) ?? 0) > 0) {
        // Everything opened after it closes with it; each element is popped once, so this is
        // linear over the whole document.
        let top = this.open[this.open.length - 1];
        while (top && top.name !== name) {
          this.pop();
          top = this.open[this.open.length - 1];
        }
        this.pop();
      } else if (name === 'p') {
        this.element('p', {}); // "</p>" without an open <p> is an empty paragraph
        this.pop();
      }
    } else if (name === 'br') {
      this.element('br', {}); // "</br>" is a line break
      this.pop();
    }
  }

  oncomment(): void {
    // Comments (Outlook's conditional comments included) are not text; they are not kept.
  }

  oncdata(start: number, endIndex: number, offset: number): void {
    // In HTML, CDATA is a comment except inside SVG/MathML, where it is text.
    if (this.isInForeignContext()) this.text(this.input.slice(start, endIndex - offset));
  }

  ondeclaration(): void {}

  onprocessinginstruction(): void {}

  onend(): void {}

  private readTagName(start: number, endIndex: number): string {
    const name = this.input.slice(start, endIndex).toLowerCase();
    if (this.foreign[this.foreign.length - 1] === 'svg') return SVG_NAMES.get(name) ?? name;
    if (this.foreign.length > 0) {
      // "</foreignObject>" while inside its own content closes it.
      const adjusted = SVG_NAMES.get(name);
      if (adjusted !== undefined && (this.openCount.get(adjusted) ?? 0) > 0) return adjusted;
    }
    if (!this.isInForeignContext()) return name === 'image' ? 'img' : name;
    return name;
  }

  private endOpenTag(): void {
    const attribs = this.attribs;
    this.attribs = null;
    if (!attribs || this.tagName === '') return;
    this.element(this.tagName, attribs);
    if (VOID_ELEMENTS.has(this.tagName)) this.pop();
  }

  private element(name: string, attribs: Record<string, string>): void {
    if (this.stopped) return;
    let kind: OpenElement['kind'];
    let hides = false;
    if (this.hiding > 0) {
      kind = 'none';
    } else if (this.open.length < this.limits.maxDepth) {
      kind = 'structural';
    } else if (DROPPED_TAGS.has(name) || isHiddenByAttributes(attribs)) {
      // Hiding is decided here for flattened elements: in the DOM their content is not inside them.
      kind = 'none';
      hides = true;
    } else {
      kind = 'flat';
    }
    let foreign: OpenElement['foreign'] = null;
    if (FOREIGN_ELEMENTS.has(name)) foreign = name as 'svg' | 'math';
    else if (INTEGRATION_ELEMENTS.has(name)) foreign = 'html';
    const entry: OpenElement = { name, attribs, kind, hides, foreign };
    // A flattened void element (<br>, <hr>, <img>) is built at once: it has no text to wait for.
    if (kind === 'structural' || (kind === 'flat' && VOID_ELEMENTS.has(name))) {
      if (!this.build(entry)) return;
    }
    if (hides) this.hiding += 1;
    if (foreign) this.foreign.push(foreign);
    this.open.push(entry);
    this.openCount.set(name, (this.openCount.get(name) ?? 0) + 1);
  }

  private build(entry: OpenElement): boolean {
    if (this.elements >= this.limits.maxElements) {
      this.stop(`more than ${this.limits.maxElements.toLocaleString('en-US')} HTML elements`);
      return false;
    }
    this.elements += 1;
    if (this.flatOpen) this.closeFlat();
    this.handler.onopentag(entry.name, entry.attribs);
    if (entry.kind === 'flat') this.flatOpen = entry;
    return true;
  }

  private pop(): void {
    const entry = this.open.pop();
    if (!entry) return;
    this.openCount.set(entry.name, (this.openCount.get(entry.name) ?? 1) - 1);
    if (entry.foreign) this.foreign.pop();
    if (entry.hides) this.hiding -= 1;
    if (entry.kind === 'flat') {
      if (this.flatOpen === entry) this.closeFlat();
    } else if (entry.kind === 'structural') {
      if (this.flatOpen) this.closeFlat();
      this.handler.onclosetag();
    }
  }

  private closeFlat(): void {
    this.flatOpen = null;
    this.handler.onclosetag();
  }

  private text(data: string): void {
    if (this.stopped || this.hiding > 0 || data === '') return;
    const top = this.open[this.open.length - 1];
    if (top?.kind === 'flat' && this.flatOpen !== top && !this.build(top)) return;
    this.handler.ontext(data);
  }

  private stop(reason: string): void {
    this.stopped = true;
    this.cut = reason;
    this.tokenizer.pause();
  }
}

function isHiddenByAttributes(attribs: Record<string, string>): boolean {
  if ('hidden' in attribs) return true;
  if ((attribs['aria-hidden'] ?? '').trim().toLowerCase() === 'true') return true;
  const style = attribs['style'];
  return style !== undefined && styleHides(style);
}

// Elements whose content is never shown (or is images/media, whose alt text is noise here).
const DROPPED_TAGS = new Set([
  'script',
  'style',
  'head',
  'template',
  'noscript',
  'title',
  'meta',
  'link',
  'base',
  'img',
  'picture',
  'svg',
  'video',
  'audio',
  'canvas',
  'iframe',
  'object',
  'embed',
  'map',
  'area',
  'source',
  'track',
  'select',
  'datalist',
  'input',
]);

// Blocks that start and end on their own line.
const LINE_BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'body',
  'center',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'html',
  'legend',
  'main',
  'nav',
  'section',
  'summary',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'caption',
]);

// Blocks separated from their neighbours by a blank line (they have vertical margins in browsers).
const PARAGRAPH_BLOCKS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'hr']);

interface ListState {
  ordered: boolean;
  count: number;
}

/** Accumulates rendered lines; mirrors how a browser lays out inline text and block boxes. */
class TextBuilder {
  readonly lines: string[] = [];
  private cur = '';
  private lineHasText = false;
  private pendingSpace = false;
  private pendingCellSeparator = false;
  preDepth = 0;
  readonly lists: ListState[] = [];
  /** Count of visible characters emitted so far (lets `<a>` detect empty link text). */
  emitted = 0;
  private finishedChars = 0;

  /** Characters rendered so far, the current line included. */
  get size(): number {
    return this.finishedChars + this.cur.length;
  }

  text(raw: string): void {
    const clean = stripInvisibleChars(raw);
    if (this.preDepth > 0) {
      const parts = clean.replace(/\r\n?/g, '\n').split('\n');
      parts.forEach((part, index) => {
        if (index > 0) this.lineBreak();
        if (part !== '') this.appendWord(part);
      });
      return;
    }
    // Only ASCII whitespace collapses in HTML; &nbsp; is a visible space and keeps a line open
    // (Outlook writes empty paragraphs as <p>&nbsp;</p>).
    const collapsed = clean.replace(/[ \t\n\r\f]+/g, ' ');
    if (collapsed === '') return;
    if (collapsed === ' ') {
      this.pendingSpace = true;
      return;
    }
    const leading = collapsed.startsWith(' ');
    const trailing = collapsed.endsWith(' ');
    if (leading) this.pendingSpace = true;
    this.appendWord(collapsed.slice(leading ? 1 : 0, trailing ? -1 : undefined));
    this.pendingSpace = trailing;
  }

  private appendWord(word: string): void {
    if (!this.lineHasText) {
      // Continuation lines inside a list item are indented under the item text.
      if (this.cur === '' && this.lists.length > 0) this.cur = '  '.repeat(this.lists.length);
    } else if (this.pendingCellSeparator) {
      this.cur += this.cur.endsWith(':') ? ' ' : ' | ';
    } else if (this.pendingSpace) {
      this.cur += ' ';
    }
    this.pendingCellSeparator = false;
    this.pendingSpace = false;
    this.cur += word;
    this.lineHasText = true;
    this.emitted += word.length;
  }

  /** `<br>`: always ends the current line, even an empty one. */
  lineBreak(): void {
    this.pushLine();
  }

  /** Block boundary: ends the current line if it has text; never creates an empty line. */
  blockBreak(): void {
    if (this.lineHasText) this.pushLine();
    this.pendingSpace = false;
  }

  /** Paragraph boundary: ends the line and leaves one blank line. */
  blankLine(): void {
    this.blockBreak();
    if (this.cur !== '') return; // a list marker is waiting for its text
    if (this.lines.length > 0 && this.lines[this.lines.length - 1] !== '') this.lines.push('');
  }

  startListItem(): void {
    this.blockBreak();
    const list = this.lists[this.lists.length - 1];
    let marker = '-';
    if (list?.ordered) {
      list.count += 1;
      marker = `${list.count}.`;
    }
    this.cur = `${'  '.repeat(Math.max(0, this.lists.length - 1))}${marker} `;
  }

  endListItem(): void {
    this.blockBreak();
    if (!this.lineHasText) this.cur = ''; // drop the marker of an empty item
  }

  startCell(): void {
    if (this.lineHasText) this.pendingCellSeparator = true;
  }

  endRow(): void {
    this.blockBreak();
    this.pendingCellSeparator = false;
  }

  finish(): string[] {
    this.blockBreak();
    return this.lines;
  }

  private pushLine(): void {
    this.lines.push(this.cur);
    this.finishedChars += this.cur.length + 1;
    this.resetLine();
  }

  private resetLine(): void {
    this.cur = '';
    this.lineHasText = false;
    this.pendingSpace = false;
    this.pendingCellSeparator = false;
  }
}

type Frame = { kind: 'enter'; node: HtmlNode } | { kind: 'exit'; element: HtmlElement; linkStart: number; imagesAtStart: number };

function renderDocument(document: HtmlDocument, hidingRules: HidingRules, maxChars: number): VisibleText {
  const out = new TextBuilder();
  let cut: string | null = null;
  let imagesSeen = 0;
  const stack: Frame[] = [];
  for (let i = document.children.length - 1; i >= 0; i--) {
    const child = document.children[i];
    if (child) stack.push({ kind: 'enter', node: child });
  }

  while (stack.length > 0) {
    if (out.size > maxChars) {
      cut = `text longer than ${maxChars.toLocaleString('en-US')} characters`;
      break;
    }
    const frame = stack.pop();
    if (!frame) break;
    if (frame.kind === 'exit') {
      leaveElement(out, frame.element, frame.linkStart, frame.imagesAtStart, imagesSeen);
      continue;
    }
    const node = frame.node;
    if (node.type === ElementType.Text) {
      out.text(node.data);
      continue;
    }
    if (node.type === ElementType.Root) {
      pushChildren(stack, node.children);
      continue;
    }
    if (node.type !== ElementType.Tag && node.type !== ElementType.Script && node.type !== ElementType.Style) {
      continue; // comments (incl. Outlook conditional comments), doctype, CDATA
    }
    const name = node.name.toLowerCase();
    if (name === 'img' || name === 'picture' || name === 'svg') imagesSeen += 1;
    if (DROPPED_TAGS.has(name) || isHiddenElement(node) || hidingRules.hides(node, name)) continue;

    if (name === 'br') {
      out.lineBreak();
      continue;
    }
    enterElement(out, node, name);
    stack.push({ kind: 'exit', element: node, linkStart: out.emitted, imagesAtStart: imagesSeen });
    pushChildren(stack, node.children);
  }
  const text = finish(out.finish());
  return { text: cut === null ? text : sliceWhole(text, maxChars).trimEnd(), cut };
}

function pushChildren(stack: Frame[], children: HtmlNode[]): void {
  for (let i = children.length - 1; i >= 0; i--) {
    const child = children[i];
    if (child) stack.push({ kind: 'enter', node: child });
  }
}

function enterElement(out: TextBuilder, element: HtmlElement, name: string): void {
  if (name === 'li') {
    out.startListItem();
  } else if (name === 'ul' || name === 'ol') {
    // Only a top-level list gets blank lines around it; nested lists stay tight.
    if (out.lists.length === 0) out.blankLine();
    else out.blockBreak();
    out.lists.push({ ordered: name === 'ol', count: 0 });
  } else if (name === 'td' || name === 'th') {
    out.startCell();
  } else if (name === 'tr') {
    out.endRow();
  } else if (name === 'p' && isOutlookParagraph(element)) {
    out.blockBreak();
  } else if (PARAGRAPH_BLOCKS.has(name)) {
    out.blankLine();
    if (name === 'pre') out.preDepth += 1;
  } else if (LINE_BLOCKS.has(name)) {
    out.blockBreak();
  }
}

function leaveElement(out: TextBuilder, element: HtmlElement, linkStart: number, imagesAtStart: number, imagesSeen: number): void {
  const name = element.name.toLowerCase();
  if (name === 'li') {
    out.endListItem();
  } else if (name === 'ul' || name === 'ol') {
    out.lists.pop();
    if (out.lists.length === 0) out.blankLine();
    else out.blockBreak();
  } else if (name === 'tr') {
    out.endRow();
  } else if (name === 'a') {
    // Keep link text only; show the target when the link has no text at all. A link around an
    // image (banner, logo) stays silent: its URL is usually a tracking redirect.
    if (out.emitted === linkStart && imagesSeen === imagesAtStart) {
      const target = linkTarget(element);
      if (target) out.text(` ${target}`);
    }
  } else if (name === 'p' && isOutlookParagraph(element)) {
    out.blockBreak();
  } else if (PARAGRAPH_BLOCKS.has(name)) {
    if (name === 'pre') out.preDepth = Math.max(0, out.preDepth - 1);
    out.blankLine();
  } else if (LINE_BLOCKS.has(name)) {
    out.blockBreak();
  }
}

// Outlook desktop writes every line as <p class=MsoNormal> with zero margins; treating those as
// paragraphs would double-space every Outlook mail.
function isOutlookParagraph(element: HtmlElement): boolean {
  const cls = element.attribs['class'];
  return cls !== undefined && /(?:^|\s)MsoNormal(?:\s|$)/i.test(cls);
}

function linkTarget(element: HtmlElement): string | null {
  const href = (element.attribs['href'] ?? '').trim();
  if (/^https?:\/\//i.test(href)) return href;
  if (/^mailto:/i.test(href)) return href.slice('mailto:'.length).split('?')[0] || null;
  return null;
}

function isHiddenElement(element: HtmlElement): boolean {
  return isHiddenByAttributes(element.attribs);
}

/** True when an inline style makes the element (and everything in it) invisible. */
function styleHides(style: string): boolean {
  const decls = parseInlineStyle(style);
  const get = (prop: string): string => decls.get(prop) ?? '';
  if (get('display') === 'none') return true;
  const visibility = get('visibility');
  if (visibility === 'hidden' || visibility === 'collapse') return true;
  if (get('mso-hide') === 'all') return true;
  const opacity = get('opacity');
  if (opacity !== '' && isZero(opacity)) return true;
  if (isZero(get('font-size'))) return true;
  const clipped = ['overflow', 'overflow-x', 'overflow-y'].some((prop) => {
    const value = get(prop);
    return value === 'hidden' || value === 'clip';
  });
  if (clipped) {
    const zeroBox = ['height', 'max-height', 'width', 'max-width'].some((prop) => isZero(get(prop)));
    if (zeroBox) return true;
  }
  return false;
}

function parseInlineStyle(style: string): Map<string, string> {
  const decls = new Map<string, string>();
  for (const part of removeCssComments(style.toLowerCase()).split(';')) {
    const colon = part.indexOf(':');
    if (colon < 0) continue;
    const prop = part.slice(0, colon).trim();
    const value = part
      .slice(colon + 1)
      .replace('!important', '')
      .trim();
    if (prop !== '') decls.set(prop, value); // later declarations win, as in CSS
  }
  return decls;
}

// indexOf loop rather than a lazy regex: an unterminated "/*" repeated many times would make a
// regex scan quadratically.
function removeCssComments(css: string): string {
  if (!css.includes('/*')) return css;
  let result = '';
  let pos = 0;
  while (pos < css.length) {
    const open = css.indexOf('/*', pos);
    if (open < 0) {
      result += css.slice(pos);
      break;
    }
    result += css.slice(pos, open);
    const close = css.indexOf('*/', open + 2);
    if (close < 0) break;
    pos = close + 2;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// <style> sheets: rules with simple selectors that hide elements
// ---------------------------------------------------------------------------------------------
// Marketing preheaders and injected instructions are often hidden through a class rule instead
// of an inline style. Only the common, unambiguous cases are supported: top-level rules whose
// selectors are compounds of tag, classes and id (".x", "#id", "td", "span.a.b", "div#id"), and
// whose declarations hide by the same checks as inline styles. Selectors with combinators,
// attribute selectors or pseudo-classes are skipped, as are @media/@supports/other at-rule blocks
// and nested rules. There is no cascade: any matching hiding rule hides, even if a later rule or
// an inline style would show the element again. Class and id matching is case-insensitive (as in
// quirks mode, which many mails render in): when in doubt, hide.

const MAX_STYLE_CHARS = 200_000; // total style text parsed, over all <style> elements
const MAX_STYLE_RULES = 500; // top-level rules (incl. at-rules) considered, over all sheets
const MAX_HIDING_SELECTORS = 500; // hiding selectors kept; bounds the per-element matching work

// Optional tag (or "*"), then any number of .class / #id parts. Escapes, attribute selectors,
// pseudo-classes and combinators do not match, so such selectors are skipped.
const SIMPLE_SELECTOR = /^(?:\*|[a-z][a-z0-9-]*)?(?:[.#]-?[_a-z\u00a0-\uffff][\w\u00a0-\uffff-]*)*$/;
const SELECTOR_PART = /[.#][^.#]+/g;

// Never hidden by a style sheet rule: hiding them would drop the whole mail, and a rule that
// blanks the visible part is irrelevant to what the text says.
const UNHIDEABLE_TAGS = new Set(['html', 'body']);

interface CompoundSelector {
  tag: string | null;
  id: string | null;
  classes: string[];
}

class HidingRules {
  private readonly selectors: CompoundSelector[] = [];
  private readonly seen = new Set<string>();
  /** Selectors keyed by their rarest part ("t:tag", "i:id", "c:class"); built on first use. */
  private index: Map<string, CompoundSelector[]> | null = null;
  private readonly verdicts = new Map<string, boolean>();

  add(selector: CompoundSelector): void {
    if (this.selectors.length >= MAX_HIDING_SELECTORS) return;
    const key = selectorParts(selector).sort().join(' ');
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.selectors.push(selector);
    this.index = null;
  }

  hides(element: HtmlElement, name: string): boolean {
    if (this.selectors.length === 0 || UNHIDEABLE_TAGS.has(name)) return false;
    const id = (element.attribs['id'] ?? '').toLowerCase();
    const classAttr = (element.attribs['class'] ?? '').toLowerCase();
    // Mails repeat the same tag/id/class combinations many times; remember each verdict.
    const memoKey = `${name} ${id} ${classAttr}`;
    const known = this.verdicts.get(memoKey);
    if (known !== undefined) return known;
    const index = this.buildIndex();
    const classes = new Set(classAttr.split(/[ \t\n\r\f]+/));
    classes.delete('');
    let hidden = matchesAny(index.get(`t:${name}`), name, id, classes);
    if (!hidden && id !== '') hidden = matchesAny(index.get(`i:${id}`), name, id, classes);
    if (!hidden) {
      for (const cls of classes) {
        if (matchesAny(index.get(`c:${cls}`), name, id, classes)) {
          hidden = true;
          break;
        }
      }
    }
    this.verdicts.set(memoKey, hidden);
    return hidden;
  }

  // Keying each selector under its part that is rarest among all selectors keeps the candidate
  // lists an element has to check short, even for sheets built to share one common class.
  private buildIndex(): Map<string, CompoundSelector[]> {
    if (this.index) return this.index;
    const frequency = new Map<string, number>();
    for (const selector of this.selectors) {
      for (const part of selectorParts(selector)) frequency.set(part, (frequency.get(part) ?? 0) + 1);
    }
    const index = new Map<string, CompoundSelector[]>();
    for (const selector of this.selectors) {
      let best: string | null = null;
      let bestCount = Infinity;
      for (const part of selectorParts(selector)) {
        const count = frequency.get(part) ?? 0;
        if (count < bestCount) {
          best = part;
          bestCount = count;
        }
      }
      if (best === null) continue;
      const list = index.get(best);
      if (list) list.push(selector);
      else index.set(best, [selector]);
    }
    this.index = index;
    return index;
  }
}

function selectorParts(selector: CompoundSelector): string[] {
  const parts = selector.classes.map((cls) => `c:${cls}`);
  if (selector.id !== null) parts.push(`i:${selector.id}`);
  if (selector.tag !== null) parts.push(`t:${selector.tag}`);
  return parts;
}

function matchesAny(candidates: CompoundSelector[] | undefined, name: string, id: string, classes: Set<string>): boolean {
  if (!candidates) return false;
  for (const selector of candidates) {
    if (selector.tag !== null && selector.tag !== name) continue;
    if (selector.id !== null && selector.id !== id) continue;
    let all = true;
    for (const cls of selector.classes) {
      if (!classes.has(cls)) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

/** Reads every applicable <style> element in the document (head or body) into hiding rules. */
function collectHidingRules(document: HtmlDocument): HidingRules {
  const rules = new HidingRules();
  const budget = { chars: MAX_STYLE_CHARS, rules: MAX_STYLE_RULES };
  const stack: HtmlNode[] = [];
  pushNodes(stack, document.children);
  // Iterative walk: deep nesting cannot overflow the call stack.
  while (stack.length > 0 && budget.chars > 0 && budget.rules > 0) {
    const node = stack.pop();
    if (!node) break;
    if (node.type === ElementType.Root) {
      pushNodes(stack, node.children);
      continue;
    }
    if (node.type !== ElementType.Tag && node.type !== ElementType.Style && node.type !== ElementType.Script) {
      continue;
    }
    const name = node.name.toLowerCase();
    if (name === 'template' || name === 'script') continue; // inert content
    if (name === 'style') {
      if (styleElementApplies(node)) {
        let css = '';
        for (const child of node.children) {
          if (child.type === ElementType.Text) css += child.data;
        }
        css = css.slice(0, budget.chars);
        budget.chars -= css.length;
        parseStyleSheet(css, rules, budget);
      }
      continue;
    }
    pushNodes(stack, node.children);
  }
  return rules;
}

function pushNodes(stack: HtmlNode[], children: HtmlNode[]): void {
  for (let i = children.length - 1; i >= 0; i--) {
    const child = children[i];
    if (child) stack.push(child);
  }
}

/** A sheet for another media (print, a media query) or a non-CSS type is not applied. */
function styleElementApplies(element: HtmlElement): boolean {
  const type = (element.attribs['type'] ?? '').trim().toLowerCase();
  if (type !== '' && type !== 'text/css') return false;
  const media = (element.attribs['media'] ?? '').trim().toLowerCase();
  return media === '' || media === 'all' || media === 'screen';
}

/**
 * Single linear scan over the sheet: top-level preludes and their blocks. At-rules and rules with
 * nested blocks are skipped whole; quoted strings are skipped so braces inside them do not count.
 */
function parseStyleSheet(rawCss: string, rules: HidingRules, budget: { rules: number }): void {
  // CDO/CDC ("<!--", "-->") are ignored at the top level of a sheet; old mails wrap CSS in them.
  const css = removeCssComments(rawCss.toLowerCase()).split('<!--').join(' ').split('-->').join(' ');
  let preludeStart = 0;
  let atRule: boolean | null = null; // null until the prelude's first non-whitespace character
  let i = 0;
  while (i < css.length && budget.rules > 0) {
    const ch = css[i];
    if (ch === '"' || ch === "'") {
      atRule ??= false;
      i = skipString(css, i);
      continue;
    }
    if (ch === ';' && atRule === true) {
      // Block-less at-rule (@import, @charset): ends here.
      preludeStart = i + 1;
      atRule = null;
      i += 1;
      continue;
    }
    if (ch === '{') {
      const block = findBlockEnd(css, i + 1);
      budget.rules -= 1;
      if (atRule !== true && !block.nested) {
        addRule(css.slice(preludeStart, i), css.slice(i + 1, block.end), rules);
      }
      i = block.end + 1;
      preludeStart = i;
      atRule = null;
      continue;
    }
    if (atRule === null && ch !== undefined && !/[ \t\n\r\f]/.test(ch)) atRule = ch === '@';
    i += 1;
  }
}

/** Index of the "}" closing a block whose content starts at `start` (css.length if unclosed). */
function findBlockEnd(css: string, start: number): { end: number; nested: boolean } {
  let depth = 1;
  let nested = false;
  let i = start;
  while (i < css.length) {
    const ch = css[i];
    if (ch === '"' || ch === "'") {
      i = skipString(css, i);
      continue;
    }
    if (ch === '{') {
      depth += 1;
      nested = true;
    } else if (ch === '}') {
      depth -= 1;
      if (depth === 0) return { end: i, nested };
    }
    i += 1;
  }
  return { end: css.length, nested }; // an unclosed block is closed by the end of the sheet
}

/** Index just after a quoted string starting at `start` (strings end at a newline, as in CSS). */
function skipString(css: string, start: number): number {
  const quote = css[start];
  let i = start + 1;
  while (i < css.length) {
    const ch = css[i];
    if (ch === '\\') i += 2;
    else if (ch === quote || ch === '\n') return i + 1;
    else i += 1;
  }
  return css.length;
}

function addRule(prelude: string, declarations: string, rules: HidingRules): void {
  if (!styleHides(declarations)) return;
  for (const raw of prelude.split(',')) {
    const selector = parseSimpleSelector(raw.trim());
    if (selector) rules.add(selector);
  }
}

function parseSimpleSelector(text: string): CompoundSelector | null {
  if (text === '' || text === '*' || !SIMPLE_SELECTOR.test(text)) return null;
  const firstPart = text.search(/[.#]/);
  const tagText = firstPart < 0 ? text : text.slice(0, firstPart);
  const tag = tagText === '' || tagText === '*' ? null : tagText;
  if (tag !== null && UNHIDEABLE_TAGS.has(tag)) return null;
  let id: string | null = null;
  const classes: string[] = [];
  for (const [part] of text.matchAll(SELECTOR_PART)) {
    if (part.startsWith('#')) {
      if (id !== null && id !== part.slice(1)) return null; // "#a#b" can never match
      id = part.slice(1);
    } else {
      classes.push(part.slice(1));
    }
  }
  return { tag, id, classes };
}

/** "0", "0px", "0.0em", ".0", "0%" → true; "", "10px", "auto" → false. */
function isZero(value: string): boolean {
  return /^[+-]?(?:0+(?:\.0*)?|\.0+)(?:[a-z]+|%)?$/.test(value);
}

/** Final tidy-up shared by all paths: nbsp → space, trailing whitespace, blank-line runs. */
function finish(lines: string[]): string {
  return lines
    .map((line) => line.replace(/\u00A0/g, ' ').trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+/, '') // leading blank lines only: a first line may be visibly indented
    .trimEnd();
}

/** Fallback tag stripper (linear scan; only used if rendering ever fails). */
function stripTagsCrudely(html: string): string {
  let result = '';
  let inTag = false;
  for (let i = 0; i < html.length; i++) {
    const ch = html[i];
    if (ch === '<') inTag = true;
    else if (ch === '>' && inTag) {
      inTag = false;
      result += ' ';
    } else if (!inTag) result += ch;
  }
  return stripInvisibleChars(result).replace(/[ \t]+/g, ' ');
}
