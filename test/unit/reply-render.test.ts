import { parseDocument } from 'htmlparser2';
import { DomUtils } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import {
  MARKDOWN_MAX_CHARS,
  QUOTE_MAX_CHARS,
  QUOTE_MAX_LINES,
  quoteHeader,
  quotedLines,
  renderReply,
} from '../../src/mail/reply-render.ts';

/** Every element name and every attribute of the rendered HTML, as a browser would parse it. */
function elementsOf(html: string) {
  const doc = parseDocument(html);
  return DomUtils.findAll(() => true, doc.children).map((e) => ({ name: e.name, attribs: e.attribs }));
}

function hrefsOf(html: string): string[] {
  return elementsOf(html).flatMap((e) => (e.attribs['href'] !== undefined ? [e.attribs['href']] : []));
}

function bodyTextOf(html: string): string {
  return DomUtils.textContent(parseDocument(html));
}

const ALLOWED = new Set([
  'html',
  'head',
  'meta',
  'body',
  'div',
  'p',
  'br',
  'ul',
  'ol',
  'li',
  'strong',
  'em',
  'code',
  'pre',
  'a',
  'blockquote',
  'hr',
]);

function expectSafe(html: string): void {
  for (const e of elementsOf(html)) {
    expect(ALLOWED, `element <${e.name}>`).toContain(e.name);
    for (const name of Object.keys(e.attribs)) expect(name.startsWith('on'), `attribute ${name}`).toBe(false);
  }
  for (const href of hrefsOf(html)) expect(href).toMatch(/^(https?:\/\/|mailto:)/i);
}

describe('light Markdown to HTML and text', () => {
  it('renders paragraphs, lists, emphasis, code and links, and cleans the markers out of the text part', () => {
    const body = [
      'Hi Ann,',
      '',
      'Thanks for writing. Please:',
      '',
      '- open **Settings**',
      '- click *Export*',
      '  1. then this',
      '  2. and `that`',
      '',
      'See [the guide](https://acme.example/guide).',
      '',
      'Best,',
      'Acme',
    ].join('\n');
    const r = renderReply({ body });
    expect(r.html).toContain('<strong>Settings</strong>');
    expect(r.html).toContain('<em>Export</em>');
    expect(r.html).toContain('<code>that</code>');
    expect(r.html).toContain('<ol>');
    expect(r.html).toContain('<a href="https://acme.example/guide" rel="noopener noreferrer">the guide</a>');
    expect(r.html).toContain('Best,<br>');
    expectSafe(r.html);
    expect(r.text).toBe(
      [
        'Hi Ann,',
        '',
        'Thanks for writing. Please:',
        '',
        '- open Settings',
        '- click Export',
        '  1. then this',
        '  2. and that',
        '',
        'See the guide <https://acme.example/guide>.',
        '',
        'Best,',
        'Acme',
        '',
      ].join('\n'),
    );
  });

  it('leaves plain text as it was written (line breaks, numbers, snake_case, arithmetic)', () => {
    const body = 'Order #4471 ships on 3 Dec.\nYour key is api_key_live and 5 * 3 * 2 = 30.\n\nThanks,\nAcme Support';
    const r = renderReply({ body });
    expect(r.text).toBe(`${body}\n`);
    expect(r.html).not.toContain('<em>');
    expect(r.html).toContain('Order #4471 ships on 3 Dec.<br>');
  });

  it('does not make a title of a line above "---", nor hide a line that looks like a link reference', () => {
    const r = renderReply({ body: 'Thanks\n---\n[1]: https://acme.example/x' });
    expect(r.html).not.toMatch(/<h\d/);
    expect(r.text).toContain('Thanks');
    expect(r.text).toContain('[1]: https://acme.example/x');
  });

  it('links bare http(s) URLs and addresses, but never guesses a scheme', () => {
    const r = renderReply({ body: 'See https://acme.example/help or write to help@acme.example; not acme.example.' });
    expect(hrefsOf(r.html)).toEqual(['https://acme.example/help', 'mailto:help@acme.example']);
    expect(r.text).toContain('See https://acme.example/help or write to help@acme.example; not acme.example.');
  });

  it('keeps ordered lists starting where the writer started them', () => {
    const r = renderReply({ body: '3. third\n4. fourth' });
    expect(r.html).toContain('<ol start="3">');
    expect(r.text).toBe('3. third\n4. fourth\n');
  });

  it('keeps quotes and code blocks readable in the text part', () => {
    const r = renderReply({ body: '> you wrote this\n> and this\n\nAnswer:\n\n```\nrm -rf cache\n```' });
    expect(r.text).toBe('> you wrote this\n> and this\n\nAnswer:\n\nrm -rf cache\n');
    expect(r.html).toContain('<pre><code>rm -rf cache');
  });
});

describe('hostile Markdown', () => {
  it.each([
    ['javascript: link', '[click](javascript:alert(1))'],
    ['JavaScript: in capitals with spaces', '[click]( JaVaScRiPt:alert(1) )'],
    ['encoded javascript:', '[click](jav&#x61;script:alert(1))'],
    ['tab inside the scheme', '[click](java\tscript:alert(1))'],
    ['data: URL', '[click](data:text/html;base64,PHNjcmlwdD4=)'],
    ['vbscript:', '[click](vbscript:msgbox)'],
    ['file:', '[click](file:///etc/passwd)'],
    ['relative link', '[click](/account/delete)'],
    ['protocol-relative link', '[click](//evil.example/x)'],
    ['autolink to javascript:', '<javascript:alert(1)>'],
    ['reference-style link', '[click][x]\n\n[x]: javascript:alert(1)'],
  ])('%s: never a link', (_what, body) => {
    const r = renderReply({ body });
    expect(hrefsOf(r.html)).toEqual([]);
    expectSafe(r.html);
    expect(r.html).not.toMatch(/href/i);
  });

  it.each([
    ['script element', '<script>alert(1)</script>'],
    ['img with onerror', '<img src=x onerror=alert(1)>'],
    ['iframe', '<iframe src="https://evil.example"></iframe>'],
    ['style', '<style>body{display:none}</style>'],
    ['html block', '<div>\n<b>bold</b>\n</div>'],
    ['inline html in emphasis', '**<span onclick="x()">hi</span>**'],
    ['comment', '<!-- hidden --> shown'],
    ['svg', '<svg onload=alert(1)>'],
  ])('%s: escaped, never passed through', (_what, body) => {
    const r = renderReply({ body });
    expectSafe(r.html);
    // What was written is still there to read, as text.
    expect(bodyTextOf(r.html)).toContain(body.split('\n')[0]!.replace(/\*\*/g, ''));
  });

  it('sends no image: Markdown images are not rendered as <img>', () => {
    const r = renderReply({ body: '![logo](https://evil.example/track.png) and ![x](javascript:alert(1))' });
    expect(elementsOf(r.html).map((e) => e.name)).not.toContain('img');
    expectSafe(r.html);
  });

  it('escapes quotes in link targets and titles', () => {
    const r = renderReply({ body: '[a](https://acme.example/"onmouseover="x() "t\\"itle")' });
    expectSafe(r.html);
    for (const e of elementsOf(r.html)) expect(Object.keys(e.attribs)).not.toContain('onmouseover');
  });

  it.each([
    ['nested emphasis bomb', '*a **'.repeat(9_000)],
    ['underscore bomb', '_a __'.repeat(9_000)],
    ['open brackets', '['.repeat(45_000)],
    ['unclosed links', '[a]('.repeat(11_000)],
    ['backtick runs', '`a ``'.repeat(9_000)],
    ['many less-thans', '<'.repeat(45_000)],
    ['entity starts', '&#'.repeat(22_000)],
    ['mixed markers', '**_`[<'.repeat(7_500)],
  ])('%s: rendered, safe, output proportional to the input', (_what, body) => {
    const r = renderReply({ body });
    expectSafe(r.html);
    expect(r.html.length).toBeLessThan(body.length * 8 + 1_000);
    expect(r.text.length).toBeLessThanOrEqual(body.length + 10);
  });

  it.each([
    ['quotes', `${'>'.repeat(500)} deep words`],
    ['lists', `${'- '.repeat(500)}deep words`],
    ['numbered lists', `${'1. '.repeat(500)}deep words`],
    ['indented lists', Array.from({ length: 300 }, (_, i) => `${' '.repeat(i * 2)}- level ${i}`).join('\n') + '\ndeep words'],
  ])('nesting past the cap (%s) loses no text', (_what, body) => {
    const r = renderReply({ body });
    expect(bodyTextOf(r.html)).toContain('deep words');
    expect(r.text).toContain('deep words');
    expectSafe(r.html);
  });

  it('a 1 MB body is sent whole as escaped text (no Markdown past the cap)', () => {
    const body = '<b>**x**</b> [a](javascript:1)\n'.repeat(Math.ceil(1_000_000 / 31));
    expect(body.length).toBeGreaterThan(MARKDOWN_MAX_CHARS);
    const r = renderReply({ body });
    expectSafe(r.html);
    expect(hrefsOf(r.html)).toEqual([]);
    expect(r.text.length).toBe(body.trim().length + 1);
    expect(r.html).toContain('&#60;b&#62;**x**&#60;/b&#62;');
  });

  it('strips control characters and normalises line endings', () => {
    const r = renderReply({ body: 'a\r\nb\u0000c\u001b[31m\rd' });
    expect(r.text).toBe('a\nbc[31m\nd\n');
  });
});

describe('signature', () => {
  it('goes after the standard "-- " delimiter in text and escaped in HTML', () => {
    const r = renderReply({ body: 'Hello', signature: 'Ann <Support Lead>\nAcme & Co\nhttps://acme.example' });
    expect(r.text).toBe('Hello\n\n-- \nAnn <Support Lead>\nAcme & Co\nhttps://acme.example\n');
    expect(r.html).toContain('-- <br>\nAnn &#60;Support Lead&#62;<br>\nAcme &#38; Co<br>\nhttps://acme.example');
    expectSafe(r.html);
  });

  it('is never Markdown or HTML', () => {
    const r = renderReply({ body: 'Hi', signature: '<script>x()</script> **bold** [a](javascript:x)' });
    expectSafe(r.html);
    expect(r.html).not.toContain('<strong>');
    expect(hrefsOf(r.html)).toEqual([]);
  });

  it('keeps one delimiter when the signature brings its own, and is left out when blank', () => {
    expect(renderReply({ body: 'Hi', signature: '-- \nAcme' }).text).toBe('Hi\n\n-- \nAcme\n');
    expect(renderReply({ body: 'Hi', signature: '  \n ' }).text).toBe('Hi\n');
    expect(renderReply({ body: 'Hi' }).html).not.toContain('signature');
  });

  it('is capped', () => {
    const r = renderReply({ body: 'Hi', signature: 'x'.repeat(100_000) });
    expect(r.text.length).toBeLessThan(2_100);
  });
});

describe('quoted original', () => {
  const quote = {
    date: new Date('2026-12-01T20:03:00Z'),
    fromName: 'Ann Smith',
    fromAddress: 'ann@example.com',
    text: 'My export fails.\n\n> an older line\nThanks',
  };

  it('is introduced by who wrote it and when, then "> " lines in text and a cite blockquote in HTML', () => {
    const r = renderReply({ body: 'We fixed it.', quote });
    expect(r.text).toBe(
      'We fixed it.\n\nOn Tue, 1 Dec 2026 at 20:03 UTC, Ann Smith <ann@example.com> wrote:\n> My export fails.\n>\n> > an older line\n> Thanks\n',
    );
    expect(r.html).toContain('<blockquote type="cite"');
    expect(r.html).toContain('On Tue, 1 Dec 2026 at 20:03 UTC, Ann Smith &#60;ann@example.com&#62; wrote:');
    expectSafe(r.html);
  });

  it('comes after the signature', () => {
    const r = renderReply({ body: 'Done.', signature: 'Acme', quote });
    expect(r.text.indexOf('-- \nAcme')).toBeLessThan(r.text.indexOf('wrote:'));
    expect(r.html.indexOf('signature')).toBeLessThan(r.html.indexOf('blockquote'));
  });

  it('escapes the original in HTML: a hostile original stays text', () => {
    const r = renderReply({ body: 'ok', quote: { ...quote, text: '<script>alert(1)</script><img src=x onerror=y> [a](javascript:z)' } });
    expectSafe(r.html);
    expect(bodyTextOf(r.html)).toContain('<script>alert(1)</script>');
  });

  it('names a sender without a display name by address, and cleans a hostile display name', () => {
    expect(quoteHeader({ ...quote, fromName: null })).toBe('On Tue, 1 Dec 2026 at 20:03 UTC, ann@example.com wrote:');
    expect(quoteHeader({ ...quote, fromName: 'Eve\r\nBcc: x@y <evil@z>"' })).toBe(
      'On Tue, 1 Dec 2026 at 20:03 UTC, Eve Bcc: x@y evil@z <ann@example.com> wrote:',
    );
    expect(quoteHeader({ ...quote, date: new Date(Number.NaN) })).toContain('On an unknown date, ');
  });

  it('is cut to its character cap with a mark', () => {
    const lines = quotedLines('y'.repeat(QUOTE_MAX_CHARS * 50));
    expect(lines.join('').length).toBeLessThanOrEqual(QUOTE_MAX_CHARS + 3);
    expect(lines.at(-1)).toBe('[…]');
  });

  it('is cut to its line cap with a mark', () => {
    const lines = quotedLines('line\n'.repeat(QUOTE_MAX_LINES * 10));
    expect(lines).toHaveLength(QUOTE_MAX_LINES + 1);
    expect(lines.at(-1)).toBe('[…]');
  });

  it('a 1 MB original costs no more than the cap', () => {
    const r = renderReply({ body: 'ok', quote: { ...quote, text: 'z'.repeat(1_000_000) } });
    expect(r.text.length).toBeLessThan(QUOTE_MAX_CHARS + 500);
    expect(r.html.length).toBeLessThan(QUOTE_MAX_CHARS + 1_000);
  });
});
