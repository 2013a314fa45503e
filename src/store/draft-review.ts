/**
 * Drafts under review in the console: the cards a reviewer reads (the draft beside its thread's
 * notes and the customer's words), and the reviewer's changes, each conditional on the draft
 * still being a `draft`. Plain records in and out.
 */
import type { Prisma } from '../generated/prisma/client.ts';
import { textSimilarity } from '../memory/draft-outcome.ts';
import { jsonStringArray, type DbClient } from './client.ts';
import type { Db } from './database.ts';
import { contextTraceOf } from './thread-view.ts';
import type { DraftFlag } from './turns.ts';

/** One draft with what a reviewer needs beside it. */
export interface DraftCard {
  id: string;
  mailboxId: string;
  subject: string;
  body: string;
  toAddress: string;
  /** Who the reply is copied to (decided at the turn). */
  ccAddresses: string[];
  status: string;
  /** How it ended (pending, sent-as-is, sent-edited, replaced, discarded, superseded). */
  outcome: string;
  needsHuman: boolean;
  flags: DraftFlag[];
  error: string | null;
  createdAt: Date;
  sentAt: Date | null;
  thread: {
    id: string;
    summary: string;
    openItems: string[];
    currentIntent: string;
    tags: string[];
    customer: { id: string; name: string | null; key: string };
  };
  /** What the reply cites (kb passages with their text and document; profile facts and emails by reference). */
  sources: DraftSource[];
  /** The knowledge passages its prompt held, best match first, each marked cited or not (none for older turns). */
  passagesGiven: Array<{ id: string; title: string; titlePath: string; rank: number; cited: boolean }>;
  /** The customer messages the draft answers (its turn's), oldest first. */
  customerWrote: Array<{ id: string; fromAddress: string | null; fromName: string | null; text: string }>;
}

/** One cited source beside a draft: the sentences that cite it and, for a kb passage, its text. */
export interface DraftSource {
  source: string;
  sentences: string[];
  passage: { titlePath: string; text: string; document: string } | null;
}

/** A draft already approved, sent, discarded or failed, for the "recently handled" list. */
export interface HandledDraft {
  id: string;
  threadId: string;
  toAddress: string;
  subject: string;
  status: string;
  /** How it ended: a `discarded` status is a person's discard, or superseded / replaced. */
  outcome: string;
  needsHuman: boolean;
  error: string | null;
  sentAt: Date | null;
  updatedAt: Date;
}

const CARD_SELECT = {
  id: true,
  mailboxId: true,
  subject: true,
  body: true,
  toAddress: true,
  ccAddresses: true,
  status: true,
  outcome: true,
  needsHuman: true,
  flags: true,
  citations: true,
  error: true,
  createdAt: true,
  sentAt: true,
  thread: {
    select: {
      id: true,
      summary: true,
      openItems: true,
      currentIntent: true,
      tags: true,
      entity: { select: { id: true, name: true, key: true } },
    },
  },
  turn: {
    select: {
      contextTrace: true,
      messages: {
        where: { direction: 'inbound' },
        orderBy: [{ sentAt: 'asc' }, { receivedAt: 'asc' }],
        select: { id: true, fromAddress: true, fromName: true, extractedText: true },
      },
    },
  },
} satisfies Prisma.DraftSelect;

type CardRow = Prisma.DraftGetPayload<{ select: typeof CARD_SELECT }>;

/** The `flags` column as stored by a turn; entries without a rule are dropped. */
function draftFlags(value: unknown): DraftFlag[] {
  return (Array.isArray(value) ? value : []).flatMap((f: unknown) => {
    const flag = f as { rule?: unknown; excerpt?: unknown; reason?: unknown } | null;
    if (typeof flag?.rule !== 'string') return [];
    return [{ rule: flag.rule, excerpt: String(flag.excerpt ?? ''), reason: String(flag.reason ?? '') }];
  });
}

/** The `citations` column grouped by source, in order of first citation. */
function draftSources(value: unknown): DraftSource[] {
  const bySource = new Map<string, DraftSource>();
  for (const c of Array.isArray(value) ? value : []) {
    const citation = c as { source?: unknown; sentence?: unknown } | null;
    if (typeof citation?.source !== 'string') continue;
    const entry = bySource.get(citation.source) ?? { source: citation.source, sentences: [], passage: null };
    if (typeof citation.sentence === 'string' && !entry.sentences.includes(citation.sentence)) entry.sentences.push(citation.sentence);
    bySource.set(citation.source, entry);
  }
  return [...bySource.values()];
}

/** The cited knowledge passages' text, looked up in one query (a passage since removed stays null). */
async function withPassages(db: DbClient, cards: DraftCard[]): Promise<DraftCard[]> {
  const ids = [...new Set(cards.flatMap((c) => c.sources.filter((s) => s.source.startsWith('kb:')).map((s) => s.source.slice(3))))];
  if (ids.length === 0) return cards;
  const rows = await db.kbPassage.findMany({
    where: { id: { in: ids } },
    select: { id: true, titlePath: true, text: true, document: { select: { source: true } } },
  });
  const byId = new Map(rows.map((p) => [p.id, { titlePath: p.titlePath, text: p.text, document: p.document.source }]));
  for (const card of cards) for (const s of card.sources) if (s.source.startsWith('kb:')) s.passage = byId.get(s.source.slice(3)) ?? null;
  return cards;
}

function toCard(row: CardRow): DraftCard {
  const { thread } = row;
  const sources = draftSources(row.citations);
  const cited = new Set(sources.map((s) => s.source));
  return {
    id: row.id,
    mailboxId: row.mailboxId,
    subject: row.subject,
    body: row.body,
    toAddress: row.toAddress,
    ccAddresses: jsonStringArray(row.ccAddresses),
    status: row.status,
    outcome: row.outcome,
    needsHuman: row.needsHuman,
    flags: draftFlags(row.flags),
    sources,
    passagesGiven: (contextTraceOf(row.turn.contextTrace)?.passages ?? []).map((p) => ({
      id: p.id,
      title: p.title,
      titlePath: p.titlePath,
      rank: p.rank,
      cited: cited.has(`kb:${p.id}`),
    })),
    error: row.error,
    createdAt: row.createdAt,
    sentAt: row.sentAt,
    thread: {
      id: thread.id,
      summary: thread.summary,
      openItems: jsonStringArray(thread.openItems),
      currentIntent: thread.currentIntent,
      tags: jsonStringArray(thread.tags),
      customer: thread.entity,
    },
    customerWrote: row.turn.messages.map((m) => ({ id: m.id, fromAddress: m.fromAddress, fromName: m.fromName, text: m.extractedText })),
  };
}

/**
 * Which drafts a review list shows: `pending` (still drafts, the default), `handled` (no longer
 * drafts: sent, discarded, superseded, failed…) or `all`; only the flagged ones with `needsHuman`.
 */
export interface ReviewFilter {
  tag?: string | undefined;
  mailboxId?: string | undefined;
  status?: 'pending' | 'handled' | 'all' | undefined;
  needsHuman?: boolean | undefined;
}

/** Drafts the filter selects, newest first, `limit` of them after skipping `offset` (a page). */
export async function draftsToReview(db: DbClient, limit: number, filter: ReviewFilter = {}, offset = 0): Promise<DraftCard[]> {
  const rows = await db.draft.findMany({
    where: reviewWhere(filter),
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    skip: offset,
    take: limit,
    select: CARD_SELECT,
  });
  return withPassages(db, rows.map(toCard));
}

export async function countDraftsToReview(db: DbClient, filter: ReviewFilter = {}): Promise<number> {
  return db.draft.count({ where: reviewWhere(filter) });
}

const STATUS_WHERE = { pending: { status: 'draft' }, handled: { status: { not: 'draft' } }, all: {} } as const;

function reviewWhere({ tag, mailboxId, status, needsHuman }: ReviewFilter): Prisma.DraftWhereInput {
  return {
    ...STATUS_WHERE[status ?? 'pending'],
    ...(needsHuman ? { needsHuman: true } : {}),
    ...(mailboxId ? { mailboxId } : {}),
    ...(tag ? { thread: { tags: { array_contains: [tag] } } } : {}),
  };
}

/** Every reply of a thread, oldest first. */
export async function threadDraftCards(db: DbClient, threadId: string): Promise<DraftCard[]> {
  const rows = await db.draft.findMany({ where: { threadId }, orderBy: { createdAt: 'asc' }, select: CARD_SELECT });
  return withPassages(db, rows.map(toCard));
}

/** Drafts no longer under review, most recently changed first. */
export async function recentlyHandledDrafts(db: DbClient, limit: number, mailboxId?: string): Promise<HandledDraft[]> {
  return db.draft.findMany({
    where: { status: { not: 'draft' }, ...(mailboxId ? { mailboxId } : {}) },
    orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
    take: limit,
    select: {
      id: true,
      threadId: true,
      toAddress: true,
      subject: true,
      status: true,
      outcome: true,
      sentAt: true,
      updatedAt: true,
      error: true,
      needsHuman: true,
    },
  });
}

/** The thread a draft belongs to; null when the draft is gone. */
export async function draftThreadId(db: DbClient, draftId: string): Promise<string | null> {
  const row = await db.draft.findUnique({ where: { id: draftId }, select: { threadId: true } });
  return row?.threadId ?? null;
}

export async function draftExists(db: DbClient, draftId: string): Promise<boolean> {
  return (await db.draft.count({ where: { id: draftId } })) > 0;
}

/** What a reviewer changes: the status (approve, discard), the body (edit), or both. */
export interface ReviewChange {
  status?: 'queued' | 'discarded';
  body?: string;
}

/**
 * Applies a change only while the draft is still a `draft`, together with the agent's outbound
 * message row, which mirrors its draft so the thread view shows what was (or will be) sent.
 * False when the draft is gone or no longer a draft (another reviewer, a double click).
 */
export async function changeDraftUnderReview(db: Db, draftId: string, change: ReviewChange): Promise<boolean> {
  return db.$transaction(async (tx) => {
    // The first console edit is measured against the agent's own text (later edits against nothing:
    // the agent's text is gone by then), so a draft approved after editing counts as sent-edited.
    const before =
      change.body === undefined
        ? null
        : await tx.draft.findUnique({ where: { id: draftId }, select: { body: true, outcomeSimilarity: true } });
    const editSimilarity = before && before.outcomeSimilarity === null ? textSimilarity(before.body, change.body!) : undefined;
    const moved = await tx.draft.updateMany({
      where: { id: draftId, status: 'draft' },
      data: {
        ...(change.status ? { status: change.status, error: null } : {}),
        ...(change.status === 'discarded' ? { outcome: 'discarded', outcomeAt: new Date() } : {}),
        // An edited draft's copy in the Drafts folder is stale: the outbox replaces it.
        ...(change.body === undefined ? {} : { body: change.body, imapAppendedAt: null }),
        ...(editSimilarity === undefined ? {} : { outcomeSimilarity: Math.round(editSimilarity * 1000) / 1000 }),
      },
    });
    if (moved.count === 0) return false;
    const draft = await tx.draft.findUniqueOrThrow({ where: { id: draftId }, select: { mailboxId: true, messageId: true } });
    await tx.message.updateMany({
      where: { mailboxId: draft.mailboxId, messageId: draft.messageId, direction: 'outbound' },
      data: {
        ...(change.status ? { status: change.status } : {}),
        ...(change.body === undefined ? {} : { bodyText: change.body, extractedText: change.body }),
      },
    });
    return true;
  });
}
