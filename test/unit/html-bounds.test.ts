/**
 * The HTML visible-text extractor's caps (input characters, nesting depth, elements, output
 * characters) and its own tree builder, checked against htmlparser2's `parseDocument` on
 * generated tag soup. No timing assertions: a pathological slowdown fails through vitest's
 * per-test timeout, and the benchmark (`bench/phases/hostile-mail.ts`) measures the time.
 */
import { parseDocument } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import {
  cutMark,
  DEFAULT_HTML_LIMITS,
  htmlToVisibleText,
  htmlToVisibleTextWithCut,
  parseHtmlDocument,
  type HtmlNode,
} from '../../src/mail/html-text.ts';

describe('htmlToVisibleText: nesting far beyond the depth cap', () => {
  it('extracts the text of 300,000 nested divs (3.3 MB)', () => {
    const html = '<div>'.repeat(300_000) + 'Deep text: please help.' + '</div>'.repeat(300_000);
    expect(htmlToVisibleTextWithCut(html)).toEqual({ text: 'Deep text: please help.', cut: null });
  });

  it('keeps text before, inside and after the flattened part in order', () => {
    const depth = DEFAULT_HTML_LIMITS.maxDepth;
    const html = `<p>before</p>${'<div>'.repeat(depth + 500)}<span>inside</span>${'</div>'.repeat(depth + 500)}<p>after</p>`;
    expect(htmlToVisibleText(html)).toBe('before\n\ninside\n\nafter');
  });

  it('still hides hidden content nested beyond the cap, including its children', () => {
    const deep = '<div>'.repeat(DEFAULT_HTML_LIMITS.maxDepth + 10);
    const cases = [
      `${deep}<span style="display:none">secret <b>nested secret</b> tail</span>shown`,
      `${deep}<div hidden>secret <i><b>nested secret</b></i></div>shown`,
      `${deep}<div aria-hidden="true">secret <p>nested secret</p></div>shown`,
      `${deep}<script>secret()</script><style>.x{}</style>shown`,
      `${deep}<template><p>secret</p></template>shown`,
    ];
    for (const html of cases) expect(htmlToVisibleText(html)).toBe('shown');
  });

  it('keeps line breaks and images counted beyond the cap', () => {
    const deep = '<span>'.repeat(DEFAULT_HTML_LIMITS.maxDepth + 3);
    expect(htmlToVisibleText(`${deep}one<br>two<br>three`)).toBe('one\ntwo\nthree');
    // A link around an image stays silent even when both are flattened.
    expect(htmlToVisibleText(`${deep}<a href="https://track.example/x"><img src="x.png"></a>text`)).toBe('text');
  });

  it('survives 200,000 close tags that match nothing open', () => {
    const html = '<div>'.repeat(200_000) + '</span>'.repeat(200_000) + 'x';
    expect(htmlToVisibleText(html)).toBe('x');
  });

  it('ignores a second <form> however often it is repeated', () => {
    expect(htmlToVisibleText('<form>'.repeat(300_000) + 'x')).toBe('x');
  });
});

describe('htmlToVisibleText: element, input and output caps', () => {
  it('stops after maxElements elements and marks the cut', () => {
    const html = Array.from({ length: 300 }, (_, i) => `<p>${i}</p>`).join('');
    const { text, cut } = htmlToVisibleTextWithCut(html, { limits: { maxElements: 100 } });
    expect(cut).toBe('more than 100 HTML elements');
    expect(text).toBe(Array.from({ length: 100 }, (_, i) => String(i)).join('\n\n'));
    expect(htmlToVisibleText(html, { limits: { maxElements: 100 } })).toBe(`${text}\n\n${cutMark('more than 100 HTML elements')}`);
  });

  it('stops at the default element cap on 250,000 elements', () => {
    const { text, cut } = htmlToVisibleTextWithCut('<b>x</b>'.repeat(250_000));
    expect(cut).toBe('more than 200,000 HTML elements');
    expect(text).toBe('x'.repeat(200_000));
  });

  it('reads at most maxChars characters of HTML and never splits a surrogate pair', () => {
    const html = '<p>' + '😀'.repeat(1_000) + '</p>';
    const { text, cut } = htmlToVisibleTextWithCut(html, { limits: { maxChars: 104 } });
    expect(cut).toBe('HTML longer than 104 characters');
    expect(text).toBe('😀'.repeat(50));
  });

  it('stops rendering after maxOutputChars characters', () => {
    const html = '<div>line of text</div>'.repeat(1_000);
    const { text, cut } = htmlToVisibleTextWithCut(html, { limits: { maxOutputChars: 100 } });
    expect(cut).toBe('text longer than 100 characters');
    expect(text.length).toBeLessThanOrEqual(100);
    expect(text.startsWith('line of text\nline of text')).toBe(true);
  });

  it('bounds the text of 150,000 nested list items, whose indentation grows with the depth', () => {
    const { text, cut } = htmlToVisibleTextWithCut('<ul><li>x'.repeat(150_000));
    expect(cut).not.toBeNull();
    expect(text.length).toBeLessThanOrEqual(DEFAULT_HTML_LIMITS.maxOutputChars);
  });

  it('gives only the cut mark when nothing was rendered before the cut', () => {
    expect(htmlToVisibleText('<i></i>'.repeat(10), { limits: { maxElements: 3 } })).toBe(cutMark('more than 3 HTML elements'));
  });
});

describe('parseHtmlDocument: the same tree as htmlparser2 below the caps', () => {
  it.each([
    ['implied end tags', '<p>one<p>two<div>three</div><li>a<li>b<dd>x<dt>y'],
    ['tables', '<table><tr><td>a<td>b<tr><th>c<td>d</table><tbody><tr><td>e<tfoot>f'],
    ['stray end tags', '</p>x</br>y</div></span><b>z</i></b>'],
    ['void elements', '<p>a<br>b<hr>c<img src=x>d<input value=v>e<wbr>f</p>'],
    ['foreign content', '<svg><path d="M0"/><g><circle/></g><text>t</text></svg>after<math><mi>x</mi><mo>+</mo></math>'],
    ['a second form', '<form><input><form><b>x</b></form>y</form>z'],
    ['special elements', '<title>T&amp;</title><script>if (a<b) {}</script><style>p{}</style><textarea><b>x</b></textarea>'],
    [
      'entities and attributes',
      '<a href="https://x.example/?a=1&amp;b=2" title=\'q&quot;\' data-x=1 data-x=2 HIDDEN>&lt;&#x1F600;&nbsp;</a>',
    ],
    ['upper case', '<DIV CLASS="A"><P>Text</P></DIV>'],
    ['image alias', '<image src=x><svg><image href=y /></svg>'],
    ['nested anchors and buttons', '<a>1<a>2</a><button>3<button>4'],
  ])('%s', (_name, html) => {
    expect(shape(parseHtmlDocument(html).document.children)).toBe(shape(parseDocument(html).children));
  });

  it('matches on 1,000 generated pieces of tag soup', () => {
    let seed = 0x5eed;
    const random = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    // Tags with implied end tags, void, foreign, integration-point and special (raw text) elements.
    const tags = [
      'p',
      'div',
      'li',
      'ul',
      'td',
      'tr',
      'table',
      'b',
      'i',
      'a',
      'br',
      'hr',
      'dd',
      'dt',
      'h1',
      'h2',
      'form',
      'input',
      'select',
      'option',
      'optgroup',
      'svg',
      'math',
      'span',
      'blockquote',
      'pre',
      'img',
      'image',
      'tbody',
      'thead',
      'tfoot',
      'th',
      'rt',
      'rp',
      'button',
      'body',
      'head',
      'title',
      'textarea',
      'script',
      'style',
      'foreignObject',
      'desc',
      'mi',
      'clipPath',
      'annotation-xml',
      'link',
      'meta',
      'output',
      'datalist',
      'nav',
      'section',
    ];
    const extras = ['text', ' ', '&amp;', 'x&lt;y', '\n', '<', '>', '<!--c-->', '<![CDATA[cd]]>', '<!doctype html>', '<?pi x?>'];
    for (let n = 0; n < 1_000; n++) {
      const parts: string[] = [];
      for (let k = 0; k < 30; k++) {
        const tag = tags[random(tags.length)]!;
        const roll = random(11);
        const written = random(4) === 0 ? tag.toUpperCase() : tag;
        if (roll < 4) parts.push(`<${written}${random(3) === 0 ? ' class="c"' : ''}>`);
        else if (roll < 7) parts.push(`</${written}>`);
        else if (roll < 8) parts.push(`<${written}/>`);
        else parts.push(extras[random(extras.length)]!);
      }
      const html = parts.join('');
      expect(shape(parseHtmlDocument(html).document.children), html).toBe(shape(parseDocument(html).children));
    }
  });
});

/** Tags, attributes and text of a tree; comments and doctypes left out, adjacent text merged. */
function shape(nodes: readonly HtmlNode[]): string {
  const out: string[] = [];
  for (const node of nodes) {
    if (node.type === 'text') {
      if (out.length > 0 && out[out.length - 1]!.startsWith('"'))
        out[out.length - 1] = JSON.stringify(JSON.parse(out[out.length - 1]!) + node.data);
      else out.push(JSON.stringify(node.data));
    } else if (node.type === 'tag' || node.type === 'script' || node.type === 'style') {
      out.push(`<${node.name} ${JSON.stringify(node.attribs)}>${shape(node.children)}</${node.name}>`);
    }
  }
  return out.join('');
}
