// The drafts list's pure parts: reading the filters from the address, the links that keep them,
// page counts, the pager, status labels, human sizes and the stats period.
import { describe, expect, it } from 'vitest';
import {
  DRAFTS_PAGE_SIZE,
  draftFilters,
  draftListHref,
  draftStatusLabel,
  pageCount,
  pager,
  readDraftListQuery,
  type DraftListQuery,
} from '../../src/console/draft-list.ts';
import { size } from '../../src/console/html.ts';
import { statsPeriod } from '../../src/store/quality-stats.ts';

const base: DraftListQuery = { status: 'pending', needsHuman: false, page: 1 };

describe('readDraftListQuery', () => {
  it.each([
    [{}, { status: 'pending', needsHuman: false, page: 1 }],
    [{ page: '3' }, { status: 'pending', needsHuman: false, page: 3 }],
    [{ page: '0' }, { status: 'pending', needsHuman: false, page: 1 }],
    [{ page: '-2' }, { status: 'pending', needsHuman: false, page: 1 }],
    [{ page: '2.5' }, { status: 'pending', needsHuman: false, page: 1 }],
    [{ page: 'abc' }, { status: 'pending', needsHuman: false, page: 1 }],
    [{ page: '99999999' }, { status: 'pending', needsHuman: false, page: 1 }],
    [{ page: '10000' }, { status: 'pending', needsHuman: false, page: 10000 }],
    [{ status: 'handled' }, { status: 'handled', needsHuman: false, page: 1 }],
    [
      { status: 'all', human: '1' },
      { status: 'all', needsHuman: true, page: 1 },
    ],
    [{ status: 'ALL' }, { status: 'pending', needsHuman: false, page: 1 }],
    [{ status: '<script>' }, { status: 'pending', needsHuman: false, page: 1 }],
    [{ human: 'yes' }, { status: 'pending', needsHuman: false, page: 1 }],
    [{ human: '' }, { status: 'pending', needsHuman: false, page: 1 }],
  ])('%j reads as %j', (query, expected) => {
    expect(readDraftListQuery(query)).toEqual(expected);
  });
});

describe('draftListHref', () => {
  it.each<[DraftListQuery, number | undefined, string]>([
    [base, undefined, '/drafts'],
    [base, 2, '/drafts?page=2'],
    [{ ...base, page: 3 }, 1, '/drafts'],
    [{ ...base, status: 'all' }, 2, '/drafts?status=all&page=2'],
    [{ ...base, needsHuman: true }, 2, '/drafts?human=1&page=2'],
    [
      { ...base, mailbox: 'billing@acme.example', tag: 'refund', status: 'handled', needsHuman: true },
      4,
      '/drafts?mailbox=billing%40acme.example&tag=refund&status=handled&human=1&page=4',
    ],
    [{ ...base, tag: 'a&b=c' }, 2, '/drafts?tag=a%26b%3Dc&page=2'],
  ])('%j page %s is %s', (query, page, expected) => {
    expect(draftListHref(query, page)).toBe(expected);
  });
});

describe('pageCount', () => {
  it.each([
    [0, 1],
    [1, 1],
    [50, 1],
    [51, 2],
    [100, 2],
    [210, 5],
  ])('%i drafts fill %i pages', (total, pages) => {
    expect(pageCount(total)).toBe(pages);
  });

  it('pages hold at most 50', () => {
    expect(DRAFTS_PAGE_SIZE).toBeLessThanOrEqual(50);
  });
});

describe('pager', () => {
  it('is absent when everything fits on page 1', () => {
    expect(pager(base, 50).value).toBe('');
  });

  it('on the first page links only to the next, keeping the filters', () => {
    const out = pager({ ...base, status: 'all' }, 210).value;
    expect(out).toContain('Page 1 of 5 · drafts 1–50 of 210');
    expect(out).toContain('href="/drafts?status=all&amp;page=2" rel="next"');
    expect(out).not.toContain('rel="prev"');
  });

  it('in the middle links both ways', () => {
    const out = pager({ ...base, page: 3 }, 210).value;
    expect(out).toContain('drafts 101–150 of 210');
    expect(out).toContain('href="/drafts?page=2" rel="prev"');
    expect(out).toContain('href="/drafts?page=4" rel="next"');
  });

  it('on the last page shows the remainder and no Next', () => {
    const out = pager({ ...base, page: 5 }, 210).value;
    expect(out).toContain('drafts 201–210 of 210');
    expect(out).not.toContain('rel="next"');
  });

  it('past the end leads back to the last page', () => {
    const out = pager({ ...base, page: 9 }, 60).value;
    expect(out).toContain('href="/drafts?page=2" rel="prev"');
    expect(out).not.toContain('rel="next"');
  });
});

describe('draftFilters', () => {
  it('escapes the tag and marks the chosen status and checkbox', () => {
    const out = draftFilters({ ...base, status: 'handled', needsHuman: true, tag: '"><x' }, [{ address: 'a@acme.example' }]).value;
    expect(out).toContain('value="&quot;&gt;&lt;x"');
    expect(out).toContain('<option value="handled" selected>');
    expect(out).toContain('value="1" checked>');
    expect(out).not.toContain('mailbox-select');
  });

  it('offers the mailboxes when there are several', () => {
    const out = draftFilters({ ...base, mailbox: 'b@acme.example' }, [{ address: 'a@acme.example' }, { address: 'b@acme.example' }]).value;
    expect(out).toContain('<option value="b@acme.example" selected>');
  });
});

describe('draftStatusLabel', () => {
  it.each([
    ['discarded', 'superseded', 'superseded by a newer draft', ''],
    ['discarded', 'replaced', 'replaced by the team’s own reply', ''],
    ['discarded', 'discarded', 'discarded', ''],
    ['discarded', 'pending', 'discarded', ''],
    ['draft', 'pending', 'draft', ''],
    ['sent', 'sent-as-is', 'sent', 'badge-ok'],
    ['sent', 'sent-edited', 'sent', 'badge-ok'],
    ['failed', 'pending', 'failed', 'badge-bad'],
    ['bounced', 'sent-as-is', 'bounced', 'badge-bad'],
    ['send_unknown', 'pending', 'send_unknown', 'badge-bad'],
    ['queued', 'pending', 'queued', ''],
  ])('%s / %s reads "%s"', (status, outcome, text, tone) => {
    expect(draftStatusLabel(status, outcome)).toEqual({ text, tone });
  });
});

describe('size', () => {
  it.each([
    [0, '0 B', '0 bytes'],
    [1023, '1023 B', '1,023 bytes'],
    [1024, '1 KB', '1,024 bytes'],
    [250_000, '244 KB', '250,000 bytes'],
    [1_258_291, '1.2 MB', '1,258,291 bytes'],
    [52_428_800, '50.0 MB', '52,428,800 bytes'],
  ])('%i bytes show as %s', (bytes, shown, title) => {
    expect(size(bytes).value).toBe(`<data class="size" value="${bytes}" title="${title}">${shown}</data>`);
  });
});

describe('statsPeriod', () => {
  const now = new Date('2026-12-06T12:00:00Z');
  const day = 86_400_000;

  it('ends at the newest mail, a minute ago, for live mail', () => {
    expect(statsPeriod(30 * day, now, new Date('2026-12-06T11:59:00Z'))).toEqual({
      since: new Date('2026-11-06T11:59:00Z'),
      until: new Date('2026-12-06T11:59:00Z'),
    });
  });

  it('ends at the newest mail of a replayed history', () => {
    const newest = new Date('2024-03-03T15:00:00Z');
    expect(statsPeriod(7 * day, now, newest)).toEqual({ since: new Date('2024-02-25T15:00:00Z'), until: newest });
  });

  it('ends now without drafts', () => {
    expect(statsPeriod(day, now, null)).toEqual({ since: new Date('2026-12-05T12:00:00Z'), until: now });
  });

  it('ignores a mail dated in the future (a wrong clock or a forged Date)', () => {
    expect(statsPeriod(day, now, new Date('2099-01-01T00:00:00Z')).until).toEqual(now);
  });
});
