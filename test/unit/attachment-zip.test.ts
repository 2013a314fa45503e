/**
 * The one ZIP reader of attachments (attachment-zip.ts) and the Office XML read from what it
 * returns (attachment-office.ts): its limits hold at their exact edges, count every entry (kept or
 * not, stored or deflated, after the central directory too), do not depend on the step size, and
 * the text parsed is the entry measured. Archives are written by hand (test/support/bomb-files.ts)
 * so headers can lie.
 */
import { describe, expect, it } from 'vitest';
import { officeText } from '../../src/ingest/attachment-office.ts';
import { DEFAULT_ZIP_LIMITS, unzipBounded, ZipLimitError, type ZipLimits } from '../../src/ingest/attachment-zip.ts';
import { docxDocumentXml } from '../support/attachment-files.ts';
import { deflatedEntry, storedEntry, zipArchive } from '../support/bomb-files.ts';

const KB = 1024;
const limits = (over: Partial<ZipLimits>): ZipLimits => ({ ...DEFAULT_ZIP_LIMITS, ...over });
const all = () => true;
const doc = (inner: string) => docxDocumentXml(inner);

describe('unzipBounded limits', () => {
  it.each([
    ['exactly at the inflated cap', 64 * KB, 'read'],
    ['one byte over the inflated cap', 64 * KB + 1, 'limit'],
    ['far over the inflated cap', 4096 * KB, 'limit'],
  ])('a deflated entry %s', async (_name, size, expected) => {
    const zip = zipArchive([await deflatedEntry('a.bin', size)]);
    const run = () => unzipBounded(zip, all, limits({ maxInflatedBytes: 64 * KB }));
    if (expected === 'read') expect(run().inflatedBytes).toBe(size);
    else expect(run).toThrow(new ZipLimitError('it inflates to more than 0.1 MB (a zip bomb?)'));
  });

  it('counts entries it does not keep, and stored entries, toward the same cap', async () => {
    const zip = zipArchive([storedEntry('keep.xml', 'x'.repeat(40 * KB)), await deflatedEntry('media/pad.bin', 40 * KB)]);
    expect(() => unzipBounded(zip, (name) => name === 'keep.xml', limits({ maxInflatedBytes: 64 * KB }))).toThrow(ZipLimitError);
    const read = unzipBounded(zip, (name) => name === 'keep.xml', limits({ maxInflatedBytes: 80 * KB }));
    expect([...read.entries.keys()]).toEqual(['keep.xml']);
    expect(read.inflatedBytes).toBe(80 * KB);
  });

  it.each([
    [5, 'read'],
    [6, 'limit'],
  ])('an archive of %i entries under a 5-entry cap', (count, expected) => {
    const zip = zipArchive(Array.from({ length: count }, (_, i) => storedEntry(`e${i}`, '')));
    const run = () => unzipBounded(zip, all, limits({ maxEntries: 5 }));
    if (expected === 'read') expect(run().entryCount).toBe(count);
    else expect(run).toThrow('it has more than 5 entries in the archive');
  });

  it.each([1, 7, 512, 4 * KB, 1024 * KB])('gives the same entries whatever the step size (%i bytes)', async (stepBytes) => {
    const zip = zipArchive([storedEntry('a.xml', '<a>one</a>'), await deflatedEntry('b.xml', 10 * KB, 0x62)]);
    const read = unzipBounded(zip, all, limits({ stepBytes }));
    expect(Buffer.from(read.entries.get('a.xml')!).toString()).toBe('<a>one</a>');
    expect(read.entries.get('b.xml')!.length).toBe(10 * KB);
    expect(read.entryCount).toBe(2);
  });

  it('reads entries placed after the central directory too: the central directory is never the judge', async () => {
    const zip = zipArchive([storedEntry('word/document.xml', 'visible')], [await deflatedEntry('word/document.xml', 200 * KB)]);
    expect(() => unzipBounded(zip, all, limits({ maxInflatedBytes: 100 * KB }))).toThrow(ZipLimitError);
  });

  it('keeps the last of two entries with one name, having counted both', () => {
    const zip = zipArchive([storedEntry('word/document.xml', 'first'), storedEntry('word/document.xml', 'second')]);
    const read = unzipBounded(zip, all);
    expect(Buffer.from(read.entries.get('word/document.xml')!).toString()).toBe('second');
    expect(read.inflatedBytes).toBe('firstsecond'.length);
  });

  it('refuses an entry in a compression method it has no inflater for, with a clear error', () => {
    const zip = zipArchive([{ ...storedEntry('a.xml', 'x'), method: 99 as 0 }]);
    expect(() => unzipBounded(zip, all)).toThrow('an entry uses compression method 99, which is not read');
  });
});

describe('Word XML read from the entry measured', () => {
  const docx = (xml: string) => zipArchive([storedEntry('word/document.xml', xml)]);
  it.each([
    ['paragraphs with a blank line between', '<w:p><w:r><w:t>One</w:t></w:r></w:p><w:p><w:r><w:t>Two</w:t></w:r></w:p>', 'One\n\nTwo'],
    ['runs joined, tabs and breaks kept', '<w:p><w:r><w:t>A</w:t><w:tab/><w:t>B</w:t><w:br/><w:t>C</w:t></w:r></w:p>', 'A\tB\nC'],
    [
      'deleted text and field codes left out',
      '<w:p><w:r><w:t>kept</w:t><w:delText>gone</w:delText><w:instrText>PAGE</w:instrText></w:r></w:p>',
      'kept',
    ],
    [
      'a table as rows of cells',
      '<w:tbl><w:tr><w:tc><w:p><w:r><w:t>SKU</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Qty</w:t></w:r></w:p></w:tc></w:tr><w:tr><w:tc><w:p><w:r><w:t>K-5</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>2</w:t></w:r></w:p></w:tc></w:tr></w:tbl>',
      'SKU | Qty\nK-5 | 2',
    ],
    ['entities decoded', '<w:p><w:r><w:t>R&amp;D &lt;team&gt; caf&#233;</w:t></w:r></w:p>', 'R&D <team> café'],
    ['no right-to-left or other language lost', '<w:p><w:r><w:t>שלום, ваш заказ 7781</w:t></w:r></w:p>', 'שלום, ваш заказ 7781'],
  ])('%s', (_name, inner, expected) => {
    expect(officeText(docx(doc(inner)), 10_000)).toEqual({ ok: true, format: 'docx', text: expected });
  });

  it('never expands DTD entities ("billion laughs"): the text stays as small as the file', () => {
    const entities = [
      '<!ENTITY a "aaaaaaaaaa">',
      ...Array.from({ length: 8 }, (_, i) => `<!ENTITY a${i + 1} "${`&a${i === 0 ? '' : i};`.repeat(10)}">`),
    ];
    const xml = `<?xml version="1.0"?><!DOCTYPE w:document [${entities.join('')}]>${doc('<w:p><w:r><w:t>&a8;</w:t></w:r></w:p>')}`;
    const result = officeText(docx(xml), 1_000_000);
    expect(result.ok && result.text.length).toBeLessThan(100);
  });

  it('stops the text at maxChars however long the document', () => {
    const inner = '<w:p><w:r><w:t>0123456789</w:t></w:r></w:p>'.repeat(10_000);
    const result = officeText(docx(doc(inner)), 55);
    expect(result.ok && result.text.length).toBeLessThanOrEqual(55);
  });

  it('reports the limit as the reason when the document is a bomb', async () => {
    const bomb = zipArchive([await deflatedEntry('word/document.xml', 2048 * KB)]);
    expect(officeText(bomb, 1_000, limits({ maxInflatedBytes: 1024 * KB }))).toEqual({
      ok: false,
      reason: 'it inflates to more than 1 MB (a zip bomb?)',
    });
  });
});
