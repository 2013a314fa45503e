import { describe, expect, it } from 'vitest';
import { escapeHtml, html, list, mailText, time } from '../../src/console/html.ts';

describe('console HTML', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const hostile = `<script>alert("x")</script>' onmouseover='y' &amp;`;
    const out = html`<p title="${hostile}">${hostile}</p>`.value;
    expect(out).not.toContain('<script>');
    expect(out).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;y&#39; &amp;amp;">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;y&#39; &amp;amp;</p>',
    );
  });

  it('keeps nested templates as markup without escaping them twice', () => {
    const inner = html`<b>${'a&b'}</b>`;
    expect(html`<p>${inner}</p>`.value).toBe('<p><b>a&amp;b</b></p>');
    expect(html`<ul>${['<1>', html`<li>2</li>`]}</ul>`.value).toBe('<ul>&lt;1&gt;<li>2</li></ul>');
  });

  it('renders nothing for false, null and undefined, so conditions read naturally', () => {
    expect(html`[${false}${null}${undefined}${true}${0}]`.value).toBe('[0]');
  });

  it('cannot be fooled by an object that merely looks like safe HTML', () => {
    const fake = { value: '<script>1</script>' } as unknown as string;
    expect(html`${fake}`.value).not.toContain('<script>');
  });

  it('shows mail text, lists and dates escaped', () => {
    expect(mailText('<i>hi</i>\nthere').value).toBe('<pre class="mail">&lt;i&gt;hi&lt;/i&gt;\nthere</pre>');
    expect(list(['<x>']).value).toBe('<ul><li>&lt;x&gt;</li></ul>');
    expect(time(new Date('2026-01-02T03:04:05Z')).value).toBe('<time datetime="2026-01-02T03:04:05.000Z">2026-01-02 03:04 UTC</time>');
    expect(escapeHtml(`"'<>&`)).toBe('&quot;&#39;&lt;&gt;&amp;');
  });
});
