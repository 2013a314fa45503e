import { describe, expect, it } from 'vitest';
import { kbFormatOf, kbQueryTerms, parseKbDocument, searchableText, termCoverage } from '../../src/memory/knowledge.ts';

describe('reading a knowledge document into passages', () => {
  it('splits Markdown along its headings and keeps the heading path', () => {
    const doc = parseKbDocument(
      [
        '---',
        'title: Refunds',
        'lang: en-GB',
        'tags: [Billing, refunds]',
        '---',
        '# Refunds',
        'Intro text.',
        '',
        '## Refund window',
        'Within 14 days.',
        '',
        '### Annual plans',
        'Pro rata.',
        '',
        '## How to',
        '1. Reply.',
        '2. Wait.',
      ].join('\n'),
      'markdown',
      'refunds',
    );
    expect(doc).toMatchObject({ title: 'Refunds', lang: 'en', tags: ['billing', 'refunds'] });
    expect(doc.passages.map((p) => [p.titlePath, p.text])).toEqual([
      ['Refunds', 'Intro text.'],
      ['Refunds > Refund window', 'Within 14 days.'],
      ['Refunds > Refund window > Annual plans', 'Pro rata.'],
      ['Refunds > How to', '1. Reply.\n2. Wait.'],
    ]);
    expect(doc.passages.map((p) => p.ordinal)).toEqual([0, 1, 2, 3]);
  });

  it('ignores headings inside code fences and reads setext headings', () => {
    const doc = parseKbDocument(
      ['Guide', '=====', 'Text.', '```', '# not a heading', '```', 'Setup', '-----', 'Steps.'].join('\n'),
      'markdown',
      'x',
    );
    expect(doc.passages.map((p) => p.titlePath)).toEqual(['Guide', 'Guide > Setup']);
    expect(doc.passages[0]!.text).toContain('# not a heading');
  });

  it('reads HTML headings, the title and the language, and drops hidden text and scripts', () => {
    const html = `<html lang="fr-FR"><head><title>Livraison &amp; retours</title><script>alert(1)</script></head><body>
      <h1>Livraison</h1><p>Sous <b>2 jours</b>.</p><div style="display:none">caché</div><h2><a href="#">Retard</a></h2><p>Écrivez-nous.</p></body></html>`;
    const doc = parseKbDocument(html, 'html', 'x');
    expect(doc).toMatchObject({ title: 'Livraison & retours', lang: 'fr' });
    expect(doc.passages.map((p) => [p.titlePath, p.text])).toEqual([
      ['Livraison', 'Sous 2 jours.'],
      ['Livraison > Retard', 'Écrivez-nous.'],
    ]);
  });

  it('splits a long section at paragraphs, and a long paragraph at sentence ends, under the token cap', () => {
    const paragraph = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} explains one more detail of the feature.`).join(' ');
    const doc = parseKbDocument(`# Long\n\n${paragraph}\n\nShort closing paragraph.`, 'markdown', 'x', {
      maxChars: 100_000,
      maxPassageTokens: 120,
      maxPassages: 100,
    });
    expect(doc.passages.length).toBeGreaterThan(3);
    for (const p of doc.passages) {
      expect(p.tokens).toBeLessThanOrEqual(120);
      expect(p.titlePath).toBe('Long');
    }
    expect(doc.passages.map((p) => p.text).join(' ')).toContain('Sentence number 39');
  });

  it('takes plain text as one section titled by its first line, and caps input and passages', () => {
    const doc = parseKbDocument('Importing data\n\nUpload a CSV.\n\nDuplicates are merged.', 'text', 'fallback');
    expect(doc.title).toBe('Importing data');
    expect(doc.passages).toHaveLength(1);
    const huge = parseKbDocument('# H\n\n' + 'word '.repeat(200_000), 'markdown', 'x', {
      maxChars: 10_000,
      maxPassageTokens: 50,
      maxPassages: 5,
    });
    expect(huge.passages).toHaveLength(5);
  });

  it('knows its formats by file name', () => {
    expect(['a.md', 'b.HTML', 'c.htm', 'd.txt', 'e.pdf', 'f.docx'].map(kbFormatOf)).toEqual([
      'markdown',
      'html',
      'html',
      'text',
      'pdf',
      null,
    ]);
  });
});

describe('search terms', () => {
  it('drops stopwords, folds case and accents, and splits CJK runs into bigrams', () => {
    expect(kbQueryTerms('How do I export my Report to EXCEL?')).toEqual(['export', 'report', 'excel']);
    expect(kbQueryTerms('Rückerstattung für Bestellung 88213')).toEqual(['ruckerstattung', 'bestellung', '88213']);
    expect(kbQueryTerms('請求書の宛名')).toEqual(['請求', '求書', '書の', 'の宛', '宛名']);
    expect(searchableText('宛名変更')).toContain('宛名 名変 変更');
  });

  it('measures how much of a question a passage covers, counting word prefixes', () => {
    expect(termCoverage(['export', 'excel'], searchableText('Exporting reports to Excel'))).toBe(1);
    expect(termCoverage(['bitcoin', 'pay'], searchableText('Accepted payment methods: cards'))).toBe(0);
  });
});
