/**
 * What a replay's report shows of the database (threads, profiles, drafts, model usage), read back
 * in a stable order as plain records.
 */
import type { ThreadState } from '../memory/types.ts';
import { jsonStringArray, type DbClient } from './client.ts';
import { threadStateOf } from './turns.ts';

export interface ReplaySections {
  threads: Array<
    { threadId: string; entityId: string } & ThreadState & {
        /** Every promotion pass over the thread, oldest first, with the customer messages it was shown. */
        promotions: Array<{ at: string; trigger: string; messageIds: string[]; error: string | null }>;
      }
  >;
  profiles: Array<{
    entityId: string;
    addresses: string[];
    name: string | null;
    /** The ledger: every fact the profile has held, current (`active`) and past, by key then when recorded. */
    facts: Array<{
      key: string;
      value: string;
      category: string;
      confidence: number;
      origin: string;
      sourceMessageId: string | null;
      validFrom: string | null;
      recordedAt: string;
      validUntil: string | null;
      expiresAt: string | null;
      /** active | superseded | expired | deleted */
      status: string;
      /** The tags of the thread it was learnt in (none for operator and imported facts). */
      tags: string[];
    }>;
    /** Every candidate and change the policy decided, oldest first. */
    decisions: Array<{
      at: string;
      key: string;
      value: string;
      verdict: 'accepted' | 'rejected';
      rule: string;
      reason: string;
      origin: string;
      sourceMessageId: string | null;
    }>;
    pastThreads: Array<{ threadId: string; topic: string; closedAt: string | null }>;
    /** What is still owed (open or overdue). */
    outstandingCommitments: Array<{ text: string; due: string | null; dueAt: string | null; overdue: boolean }>;
    /** Every commitment, with how it was made and closed. */
    commitments: Array<{
      threadId: string;
      text: string;
      due: string | null;
      dueAt: string | null;
      /** open | fulfilled | overdue | cancelled */
      status: string;
      sourceMessageId: string | null;
      closedByMessageId: string | null;
      closeEvidence: string | null;
    }>;
  }>;
  drafts: Array<{
    threadId: string;
    /** draft | queued | sending | sent | send_unknown | discarded | failed */
    status: string;
    needsHuman: boolean;
    /** Why the draft needs a person (the outbound guard's findings and similar). */
    flags: Array<{ rule: string; excerpt: string; reason: string }>;
    to: string;
    subject: string;
    body: string;
    headers: { 'Message-ID': string; 'In-Reply-To': string | null; References: string };
  }>;
  llm: { calls: number; promptTokens: number; completionTokens: number; maxPromptTokens: number };
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** The report's database sections, read back in a stable order. */
export async function loadReplaySections(db: DbClient, mailboxId: string): Promise<ReplaySections> {
  const threads = await db.thread.findMany({ where: { mailboxId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const senders = await db.message.findMany({
    where: { mailboxId, entityId: { not: null } },
    distinct: ['entityId'],
    select: { entityId: true },
  });
  const entityIds = [...new Set([...threads.map((t) => t.entityId), ...senders.flatMap((m) => (m.entityId ? [m.entityId] : []))])];
  const entities = await db.entity.findMany({
    where: { id: { in: entityIds } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    include: {
      addresses: { orderBy: { address: 'asc' } },
      facts: { orderBy: [{ key: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }] },
      decisions: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
      commitments: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    },
  });
  const tagsOfThread = new Map(threads.map((t) => [t.id, threadStateOf(t).tags]));
  const runs = await db.promotionRun.findMany({
    where: { threadId: { in: threads.map((t) => t.id) } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { threadId: true, createdAt: true, trigger: true, coveredMessageIds: true, error: true },
  });
  const drafts = await db.draft.findMany({ where: { mailboxId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const usage = await db.llmCall.aggregate({
    where: { threadId: { in: threads.map((t) => t.id) } },
    _count: { _all: true },
    _sum: { promptTokens: true, completionTokens: true },
    _max: { promptTokens: true },
  });

  return {
    threads: threads.map((t) => {
      const { subject, summary, openItems, currentIntent, tags, pinnedItems, status } = threadStateOf(t);
      const promotions = runs
        .filter((r) => r.threadId === t.id)
        .map((r) => ({
          at: r.createdAt.toISOString(),
          trigger: r.trigger,
          messageIds: jsonStringArray(r.coveredMessageIds),
          error: r.error,
        }));
      return { threadId: t.id, entityId: t.entityId, subject, summary, openItems, currentIntent, tags, pinnedItems, status, promotions };
    }),
    profiles: entities.map((e) => ({
      entityId: e.id,
      addresses: e.addresses.map((a) => a.address),
      name: e.name,
      facts: e.facts.map((f) => ({
        key: f.key,
        value: f.value,
        category: f.category,
        confidence: f.confidence,
        origin: f.origin,
        sourceMessageId: f.sourceMessageId,
        validFrom: iso(f.validFrom),
        recordedAt: f.createdAt.toISOString(),
        validUntil: iso(f.validUntil),
        expiresAt: iso(f.expiresAt),
        status: f.status,
        // The tags stored at promotion; facts recorded before they were stored read their thread's.
        tags: (() => {
          const own = jsonStringArray(f.tags);
          return own.length > 0 ? own : ((f.sourceThreadId ? tagsOfThread.get(f.sourceThreadId) : undefined) ?? []);
        })(),
      })),
      decisions: e.decisions.map((d) => ({
        at: d.createdAt.toISOString(),
        key: d.key,
        value: d.value,
        verdict: d.accepted ? ('accepted' as const) : ('rejected' as const),
        rule: d.rule,
        reason: d.reason,
        origin: d.origin,
        sourceMessageId: d.sourceMessageId,
      })),
      pastThreads: threads
        .filter((t) => t.entityId === e.id && t.topic !== null)
        .map((t) => ({ threadId: t.id, topic: t.topic ?? '', closedAt: t.closedAt?.toISOString() ?? null })),
      outstandingCommitments: e.commitments
        .filter((c) => c.status === 'open' || c.status === 'overdue')
        .map((c) => ({ text: c.text, due: c.due, dueAt: iso(c.dueAt), overdue: c.status === 'overdue' })),
      commitments: e.commitments.map((c) => ({
        threadId: c.threadId,
        text: c.text,
        due: c.due,
        dueAt: iso(c.dueAt),
        status: c.status,
        sourceMessageId: c.sourceMessageId,
        closedByMessageId: c.closedByMessageId,
        closeEvidence: c.closeEvidence,
      })),
    })),
    drafts: drafts.map((d) => ({
      threadId: d.threadId,
      status: d.status,
      needsHuman: d.needsHuman,
      flags: draftFlags(d.flags),
      to: d.toAddress,
      subject: d.subject,
      body: d.body,
      headers: { 'Message-ID': d.messageId, 'In-Reply-To': d.inReplyTo, References: jsonStringArray(d.references).join(' ') },
    })),
    llm: {
      calls: usage._count._all,
      promptTokens: usage._sum.promptTokens ?? 0,
      completionTokens: usage._sum.completionTokens ?? 0,
      maxPromptTokens: usage._max.promptTokens ?? 0,
    },
  };
}

function draftFlags(value: unknown): Array<{ rule: string; excerpt: string; reason: string }> {
  if (!Array.isArray(value)) return [];
  return value.flatMap((f: unknown) => {
    const flag = f as { rule?: unknown; excerpt?: unknown; reason?: unknown };
    return typeof flag?.rule === 'string'
      ? [{ rule: flag.rule, excerpt: String(flag.excerpt ?? ''), reason: String(flag.reason ?? '') }]
      : [];
  });
}
