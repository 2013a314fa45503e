/**
 * What a promotion pass reads (the thread, its customer's messages no pass has seen yet, the
 * team's replies since the last pass, the profile's active facts, the open commitments) and the
 * one transaction that stores a pass (the run and the messages it covered, every decision, the
 * facts it adds, supersedes or refreshes, new and closed commitments, the thread's topic and
 * status).
 */
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { CommitmentStatus } from '../memory/commitments.ts';
import type { Decision, ExistingFact } from '../memory/promotion-policy.ts';
import { pendingFactId } from '../memory/promotion-policy.ts';
import type { ThreadActivity } from '../memory/promotion-schedule.ts';
import { jsonStringArray, type DbClient } from './client.ts';
import type { Db } from './database.ts';
import { loadThread, type ThreadRecord } from './turns.ts';

/** A customer message of the thread, with what decides whether it may source facts. */
export interface PromotionSourceMessage {
  id: string;
  messageId: string;
  text: string;
  date: Date;
  fromAddress: string;
  replyTo: string | null;
  authDmarc: string | null;
  entityId: string | null;
}

export interface TeamReply {
  messageId: string;
  date: Date;
  text: string;
  author: 'agent' | 'staff';
  /**
   * Said through a channel that proves it: a person's reply (stored as staff only when proven, see
   * src/mail/team-identity.ts) or the agent's reply once its outbox sent it; a pending draft is not.
   */
  proven: boolean;
}

export interface StoredCommitment {
  id: string;
  text: string;
  due: string | null;
  dueAt: Date | null;
  status: CommitmentStatus;
  /** When the promise was made: its message's date, else when it was recorded. */
  promisedAt: Date;
  /** The thread's tags when it was promoted. */
  tags: string[];
}

export interface PromotionState {
  thread: ThreadRecord & { needsPromotion: boolean; topic: string | null };
  /** The thread customer's own messages no pass has seen, oldest first (at most `limit`). */
  unseen: PromotionSourceMessage[];
  /** How many unseen messages there are in all (more than `unseen` holds when over the limit). */
  unseenTotal: number;
  /** The team's replies since the last pass that covered anything, oldest first. */
  replies: TeamReply[];
  commitments: StoredCommitment[];
}

const inboundOfCustomer = (threadId: string, entityId: string) =>
  ({ threadId, direction: 'inbound', skipReason: null, entityId, promotedBy: null }) as const;

export async function loadPromotionState(db: DbClient, threadId: string, limit: number): Promise<PromotionState> {
  const thread = await loadThread(db, threadId);
  if (!thread) throw new AppError('NOT_FOUND', `no thread ${threadId}`);
  const row = await db.thread.findUniqueOrThrow({ where: { id: threadId }, select: { needsPromotion: true, topic: true } });
  // Only the customer's own words can become the customer's facts: a participant who joined the
  // thread (a Cc, a forged From's accomplice) is shown to no pass as the customer.
  const where = inboundOfCustomer(threadId, thread.entityId);
  const [messages, unseenTotal, lastPass, commitments] = await Promise.all([
    db.message.findMany({
      where,
      orderBy: [{ sentAt: 'asc' }, { receivedAt: 'asc' }, { id: 'asc' }],
      take: limit,
      select: {
        id: true,
        messageId: true,
        extractedText: true,
        sentAt: true,
        receivedAt: true,
        authDmarc: true,
        fromAddress: true,
        replyTo: true,
        entityId: true,
      },
    }),
    db.message.count({ where }),
    db.promotionRun.findFirst({ where: { threadId, error: null }, orderBy: { createdAt: 'desc' }, select: { createdAt: true } }),
    db.commitment.findMany({ where: { threadId, status: { in: ['open', 'overdue'] } }, orderBy: { createdAt: 'asc' } }),
  ]);
  // What the team said: staff replies (from the Sent folder or a staff address, including an agent's
  // draft a person sent with its Message-ID kept, whose row then holds the text sent) and the agent's
  // drafts still pending (assumed to go out as written). A draft sent edited under another
  // Message-ID, replaced, superseded or discarded said nothing: what was sent instead is a staff row.
  const outbound = await db.message.findMany({
    where: { threadId, direction: 'outbound', ...(lastPass ? { receivedAt: { gt: lastPass.createdAt } } : {}) },
    orderBy: [{ receivedAt: 'asc' }, { id: 'asc' }],
    select: { messageId: true, receivedAt: true, sentAt: true, extractedText: true, author: true, status: true },
  });
  const saidNothing = new Set(
    (
      await db.draft.findMany({
        where: {
          threadId,
          OR: [{ status: 'discarded' }, { outcome: { in: ['replaced', 'superseded', 'discarded'] } }, { outcomeMatch: 'in-reply-to' }],
        },
        select: { messageId: true },
      })
    ).map((d) => d.messageId),
  );
  const replies: TeamReply[] = outbound
    .filter((m) => m.author === 'staff' || !saidNothing.has(m.messageId))
    .map((m) => ({
      messageId: m.messageId,
      date: m.author === 'staff' ? (m.sentAt ?? m.receivedAt) : m.receivedAt,
      text: m.extractedText,
      author: m.author === 'staff' ? ('staff' as const) : ('agent' as const),
      proven: m.author === 'staff' || m.status === 'sent',
    }));
  const promiseIds = commitments.flatMap((c) => (c.sourceMessageId ? [c.sourceMessageId] : []));
  const promises =
    promiseIds.length === 0
      ? []
      : await db.message.findMany({
          where: { mailboxId: thread.mailboxId, messageId: { in: promiseIds } },
          select: { messageId: true, sentAt: true, receivedAt: true },
        });
  const promisedAt = new Map(promises.map((m) => [m.messageId, m.sentAt ?? m.receivedAt]));
  return {
    thread: { ...thread, needsPromotion: row.needsPromotion, topic: row.topic },
    unseen: messages.map((m) => ({
      id: m.id,
      messageId: m.messageId,
      text: m.extractedText,
      date: m.sentAt ?? m.receivedAt,
      fromAddress: m.fromAddress ?? '',
      replyTo: m.replyTo,
      authDmarc: m.authDmarc,
      entityId: m.entityId,
    })),
    unseenTotal,
    replies,
    commitments: commitments.map((c) => ({
      id: c.id,
      text: c.text,
      due: c.due,
      dueAt: c.dueAt,
      status: c.status as CommitmentStatus,
      promisedAt: (c.sourceMessageId ? promisedAt.get(c.sourceMessageId) : undefined) ?? c.createdAt,
      tags: jsonStringArray(c.tags),
    })),
  };
}

/** The profile's active facts, each with the date its statement was made (else when it was recorded). */
export async function loadActiveFacts(db: DbClient, entityId: string): Promise<Array<ExistingFact & { validFrom: Date | null }>> {
  const facts = await db.profileFact.findMany({
    where: { entityId, status: 'active' },
    orderBy: [{ key: 'asc' }, { createdAt: 'asc' }],
    select: { id: true, key: true, value: true, confidence: true, origin: true, createdAt: true, validFrom: true },
  });
  return facts.map((f) => ({
    id: f.id,
    key: f.key,
    value: f.value,
    confidence: f.confidence,
    origin: f.origin,
    sourceDate: f.validFrom ?? f.createdAt,
    validFrom: f.validFrom ?? f.createdAt,
  }));
}

export interface NewCommitment {
  text: string;
  due: string | null;
  dueAt: Date | null;
  sourceMessageId: string | null;
  /** The thread's tags at promotion. */
  tags: readonly string[];
}

/**
 * What ends when the thread is resolved or closed, by a tag whose policy lifetime is `resolved`:
 * the thread's email-learnt facts of these categories expire, these open commitments are cancelled.
 */
export interface ThreadEnding {
  facts: ReadonlyArray<{ category: string; tag: string }>;
  commitments: ReadonlyArray<{ id: string; tag: string }>;
  /** New commitments of the closing pass end too (the thread carries such a tag): the tag, else null. */
  newCommitmentsTag: string | null;
}

export interface CommitmentClose {
  id: string;
  status: 'fulfilled' | 'cancelled';
  closedByMessageId: string;
  evidence: string;
}

export interface PassCommit {
  runId: string;
  threadId: string;
  entityId: string;
  trigger: string;
  topic: string | null;
  policyVersion: string;
  promptTokens: number;
  completionTokens: number;
  /** The customer messages this pass was shown (row ids and Message-IDs). */
  covered: ReadonlyArray<{ id: string; messageId: string }>;
  decisions: readonly Decision[];
  newCommitments: readonly NewCommitment[];
  closedCommitments: readonly CommitmentClose[];
  /** Set when the model's answer was unusable: recorded, and its messages still count as shown. */
  error: string | null;
  /** Whether unseen messages remain after this pass (the thread still has news for the profile). */
  moreUnseen: boolean;
  /** Set when the pass closes the thread (quiet or resolved): its final status. */
  closeAs: 'resolved' | 'closed' | null;
  /** Applied only when the pass closes the thread. */
  ending: ThreadEnding;
  /** The thread's tags: stored with the facts and commitments this pass records. */
  threadTags: readonly string[];
  now: Date;
}

/** Stores a promotion pass in one transaction; a pass that fails leaves nothing behind. */
export async function commitPass(db: Db, c: PassCommit): Promise<void> {
  await db.$transaction(async (tx) => {
    await tx.promotionRun.create({
      data: {
        id: c.runId,
        threadId: c.threadId,
        trigger: c.trigger,
        topic: c.topic,
        policyVersion: c.policyVersion,
        promptTokens: c.promptTokens,
        completionTokens: c.completionTokens,
        coveredMessageIds: c.covered.map((m) => m.messageId),
        error: c.error,
        createdAt: c.now,
      },
    });
    if (c.covered.length > 0) {
      await tx.message.updateMany({ where: { id: { in: c.covered.map((m) => m.id) }, promotedBy: null }, data: { promotedBy: c.runId } });
    }
    const inserted = new Map<string, string>();
    for (const [index, decision] of c.decisions.entries()) {
      const decisionId = newId('pd');
      const factId = decision.accepted
        ? await applyDecision(tx, {
            decision,
            decisionId,
            index,
            inserted,
            entityId: c.entityId,
            threadId: c.threadId,
            tags: c.threadTags,
            now: c.now,
          })
        : null;
      await tx.promotionDecision.create({
        data: {
          id: decisionId,
          entityId: c.entityId,
          runId: c.runId,
          origin: 'promotion',
          key: decision.candidate.key,
          value: decision.candidate.value,
          category: decision.candidate.category,
          confidence: decision.candidate.confidence,
          explicit: decision.candidate.explicit,
          evidence: decision.candidate.evidence.slice(0, 1000),
          sourceMessageId: decision.candidate.sourceMessageId.slice(0, 300),
          accepted: decision.accepted,
          rule: decision.rule,
          reason: decision.reason,
          factId,
          createdAt: c.now,
        },
      });
    }
    if (c.newCommitments.length > 0) {
      await tx.commitment.createMany({
        data: c.newCommitments.map((n) => ({
          id: newId('c'),
          entityId: c.entityId,
          threadId: c.threadId,
          text: n.text,
          due: n.due,
          dueAt: n.dueAt,
          sourceMessageId: n.sourceMessageId,
          tags: [...n.tags],
          createdAt: c.now,
          // A promise about something that ends with the thread, made by the pass that closes it.
          ...(c.closeAs && c.ending.newCommitmentsTag ? endedCommitment(c.ending.newCommitmentsTag, c.now) : {}),
        })),
      });
    }
    for (const close of c.closedCommitments) {
      await tx.commitment.updateMany({
        where: { id: close.id, status: { in: ['open', 'overdue'] } },
        data: {
          status: close.status,
          closedByMessageId: close.closedByMessageId,
          closeEvidence: close.evidence.slice(0, 500),
          resolvedAt: c.now,
        },
      });
    }
    if (c.closeAs) await endWithThread(tx, c.entityId, c.threadId, c.ending, c.now);
    await tx.thread.update({
      where: { id: c.threadId },
      data: {
        topic: c.topic,
        needsPromotion: c.moreUnseen,
        promotionError: null,
        promotionFailedAt: null,
        // Pinned items live until the thread is promoted and closed: what mattered is in the profile now.
        ...(c.closeAs ? { status: c.closeAs, closedAt: c.now, pinnedItems: [] } : {}),
      },
    });
  });
}

/** A quiet thread with nothing new to show a pass: it closes without a model call. */
export async function closeQuietThread(
  db: Db,
  thread: { id: string; entityId: string },
  closeAs: 'resolved' | 'closed',
  ending: ThreadEnding,
  now: Date,
): Promise<void> {
  await db.$transaction(async (tx) => {
    await endWithThread(tx, thread.entityId, thread.id, ending, now);
    await tx.thread.updateMany({
      where: { id: thread.id },
      data: { needsPromotion: false, status: closeAs, closedAt: now, pinnedItems: [] },
    });
  });
}

/**
 * Ends what the policy says ends with the thread: its email-learnt facts of the listed categories
 * expire now (kept in the ledger, valid until now), the listed open commitments are cancelled with
 * the tag named as the reason, and so are the ones the closing pass just recorded.
 */
async function endWithThread(tx: Tx, entityId: string, threadId: string, ending: ThreadEnding, now: Date): Promise<void> {
  const categories = ending.facts.map((f) => f.category);
  if (categories.length > 0) {
    await tx.profileFact.updateMany({
      where: { entityId, sourceThreadId: threadId, origin: 'email', status: 'active', category: { in: categories } },
      data: { status: 'expired', expiresAt: now, validUntil: now, retiredAt: now },
    });
  }
  const byTag = new Map<string, string[]>();
  for (const c of ending.commitments) byTag.set(c.tag, [...(byTag.get(c.tag) ?? []), c.id]);
  for (const [tag, ids] of byTag) {
    await tx.commitment.updateMany({ where: { id: { in: ids }, status: { in: ['open', 'overdue'] } }, data: endedCommitment(tag, now) });
  }
}

function endedCommitment(tag: string, now: Date) {
  return {
    status: 'cancelled',
    closeEvidence: `ended with its thread (tag ${tag}: its lifetime in the policy is "resolved")`,
    resolvedAt: now,
  };
}

type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

async function applyDecision(
  tx: Tx,
  input: {
    decision: Decision;
    decisionId: string;
    index: number;
    inserted: Map<string, string>;
    entityId: string;
    threadId: string;
    tags: readonly string[];
    now: Date;
  },
): Promise<string | null> {
  const { decision, now } = input;
  const action = decision.action;
  if (!action) return null;
  if (action.kind === 'refresh') {
    const id = input.inserted.get(action.factId) ?? action.factId;
    await tx.profileFact.update({ where: { id }, data: { expiresAt: action.expiresAt } });
    return id;
  }
  const factId = newId('f');
  await tx.profileFact.create({
    data: {
      id: factId,
      entityId: input.entityId,
      key: decision.candidate.key,
      value: decision.candidate.value,
      category: decision.candidate.category,
      confidence: decision.candidate.confidence,
      origin: 'email',
      sourceMessageId: decision.candidate.sourceMessageId,
      sourceThreadId: input.threadId,
      evidence: decision.candidate.evidence.slice(0, 1000),
      createdAt: now,
      validFrom: decision.sourceDate ?? now,
      expiresAt: action.expiresAt,
      decisionId: input.decisionId,
      tags: [...input.tags],
    },
  });
  input.inserted.set(pendingFactId(input.index), factId);
  if (action.kind === 'supersede') {
    const replaced = input.inserted.get(action.replacesFactId) ?? action.replacesFactId;
    await tx.profileFact.update({
      where: { id: replaced },
      data: { status: 'superseded', validUntil: decision.sourceDate ?? now, retiredAt: now, supersededById: factId },
    });
  }
  return factId;
}

/** Threads of a mailbox whose news the profile has not seen, with what decides their next pass. */
export async function threadsNeedingPromotion(db: DbClient, mailboxId: string): Promise<Array<{ id: string } & ThreadActivity>> {
  const threads = await db.thread.findMany({
    where: { mailboxId, needsPromotion: true },
    orderBy: [{ lastMessageAt: 'asc' }, { id: 'asc' }],
    select: { id: true, lastMessageAt: true, status: true, entityId: true },
  });
  if (threads.length === 0) return [];
  const unseen = await db.message.groupBy({
    by: ['threadId'],
    where: { threadId: { in: threads.map((t) => t.id) }, direction: 'inbound', skipReason: null, promotedBy: null },
    _count: { _all: true },
    _min: { sentAt: true, receivedAt: true },
  });
  const byThread = new Map(unseen.map((u) => [u.threadId, u]));
  return threads.map((t) => {
    const u = byThread.get(t.id);
    return {
      id: t.id,
      lastMessageAt: t.lastMessageAt,
      status: t.status,
      uncovered: u?._count._all ?? 0,
      oldestUncoveredAt: u ? (u._min.sentAt ?? u._min.receivedAt) : null,
    };
  });
}

/** Open commitments past their due date become overdue (the reply context and the console show them). */
export async function markOverdueCommitments(db: DbClient, now: Date): Promise<number> {
  const moved = await db.commitment.updateMany({ where: { status: 'open', dueAt: { lt: now } }, data: { status: 'overdue' } });
  return moved.count;
}
