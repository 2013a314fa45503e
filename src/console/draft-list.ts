/**
 * The drafts list's paging, filters and labels: pure (the query in, addresses and markup out), so
 * a filter survives every Previous/Next link and a page number past the end is harmless.
 */
import { z } from 'zod';
import { html, type SafeHtml } from './html.ts';

/** At most this many draft cards on one page. */
export const DRAFTS_PAGE_SIZE = 50;
/** Pages beyond this are not served (a bounded offset, whatever the address says). */
const MAX_PAGE = 10_000;

export type DraftStatusFilter = 'pending' | 'handled' | 'all';

/** The list's filters as the address carries them. */
export interface DraftListQuery {
  mailbox?: string | undefined;
  tag?: string | undefined;
  status: DraftStatusFilter;
  needsHuman: boolean;
  page: number;
}

const STATUS_LABELS: Record<DraftStatusFilter, string> = {
  pending: 'Waiting for review',
  handled: 'Handled (sent, discarded, superseded…)',
  all: 'All drafts',
};

const listQuery = z.object({
  status: z.enum(['pending', 'handled', 'all']).catch('pending').default('pending'),
  human: z
    .string()
    .optional()
    .transform((v) => v === '1'),
  page: z.coerce.number().int().min(1).max(MAX_PAGE).catch(1).default(1),
});

/** The status, needs-a-person and page parameters; anything malformed falls back to the default. */
export function readDraftListQuery(query: Record<string, string | undefined>): Pick<DraftListQuery, 'status' | 'needsHuman' | 'page'> {
  const parsed = listQuery.parse({ status: query['status'], human: query['human'], page: query['page'] });
  return { status: parsed.status, needsHuman: parsed.human, page: parsed.page };
}

/** `/drafts?…` for the filters and page; defaults are left out so the plain address stays `/drafts`. */
export function draftListHref(query: DraftListQuery, page = query.page): string {
  const params = new URLSearchParams();
  if (query.mailbox) params.set('mailbox', query.mailbox);
  if (query.tag) params.set('tag', query.tag);
  if (query.status !== 'pending') params.set('status', query.status);
  if (query.needsHuman) params.set('human', '1');
  if (page > 1) params.set('page', String(page));
  const search = params.toString();
  return search ? `/drafts?${search}` : '/drafts';
}

/** The pages `total` items fill (at least one, so an empty list is page 1 of 1). */
export function pageCount(total: number, size = DRAFTS_PAGE_SIZE): number {
  return Math.max(1, Math.ceil(total / size));
}

/** "Drafts 51–100 of 210" and Previous/Next links that keep the filters. */
export function pager(query: DraftListQuery, total: number): SafeHtml {
  const pages = pageCount(total);
  if (pages <= 1 && query.page === 1) return html``;
  const first = Math.min(total, (query.page - 1) * DRAFTS_PAGE_SIZE + 1);
  const last = Math.min(total, query.page * DRAFTS_PAGE_SIZE);
  return html`<nav class="pager" aria-label="Pages of drafts">
  ${query.page > 1 ? html`<a href="${draftListHref(query, Math.min(query.page - 1, pages))}" rel="prev">Previous</a>` : ''}
  <span>Page ${query.page} of ${pages} · drafts ${first}–${last} of ${total}</span>
  ${query.page < pages ? html`<a href="${draftListHref(query, query.page + 1)}" rel="next">Next</a>` : ''}
</nav>`;
}

/** The filter form (a GET form: the filters are in the address, so a view can be bookmarked). */
export function draftFilters(query: DraftListQuery, mailboxes: ReadonlyArray<{ address: string }>): SafeHtml {
  return html`<form method="get" action="/drafts" class="filter" id="draft-filters">
  ${
    mailboxes.length > 1 || query.mailbox
      ? html`<label for="mailbox-select">Mailbox</label>
  <select id="mailbox-select" name="mailbox">
    <option value=""${query.mailbox ? '' : ' selected'}>All mailboxes</option>
    ${mailboxes.map((m) => html`<option value="${m.address}"${m.address === query.mailbox ? ' selected' : ''}>${m.address}</option>`)}
  </select>`
      : ''
  }
  <label for="status-select">Status</label>
  <select id="status-select" name="status">
    ${(Object.keys(STATUS_LABELS) as DraftStatusFilter[]).map(
      (s) => html`<option value="${s}"${s === query.status ? ' selected' : ''}>${STATUS_LABELS[s]}</option>`,
    )}
  </select>
  <label><input type="checkbox" name="human" value="1"${query.needsHuman ? ' checked' : ''}> Needs a person only</label>
  ${query.tag ? html`<input type="hidden" name="tag" value="${query.tag}">` : ''}
  <button type="submit">Show</button>
</form>`;
}

/**
 * A draft's status as a reviewer reads it. A `discarded` draft was discarded by a person,
 * superseded by the agent's newer draft in the thread, or replaced by a reply the team wrote itself.
 */
export function draftStatusLabel(status: string, outcome: string): { text: string; tone: '' | 'badge-ok' | 'badge-bad' } {
  if (status === 'discarded' && outcome === 'superseded') return { text: 'superseded by a newer draft', tone: '' };
  if (status === 'discarded' && outcome === 'replaced') return { text: 'replaced by the team’s own reply', tone: '' };
  if (status === 'sent') return { text: 'sent', tone: 'badge-ok' };
  if (status === 'failed' || status === 'bounced' || status === 'send_unknown') return { text: status, tone: 'badge-bad' };
  return { text: status, tone: '' };
}

/** Why the send buttons are disabled when this page's mailboxes cannot send. */
export const SEND_DISABLED_REASON = 'Sending is not configured for this mailbox (SMTP_HOST is not set): edit or discard instead.';
