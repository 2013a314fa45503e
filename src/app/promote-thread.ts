/**
 * Promotion of a thread into its customer's profile, incrementally: every customer message is
 * shown to exactly one pass. A pass shows the model the messages no pass has seen yet (split into
 * several passes, oldest first, when they exceed one pass's budget), the profile as it stands,
 * the open commitments and the team's replies since the last pass; one `thread_promotion` call
 * proposes facts and commitment changes; the written policy decides each fact, commitments close
 * only on evidence; everything is stored with the pass, which covers its messages in the same
 * transaction.
 */
import { newId } from '../ids.ts';
import type { ThreadPromotion } from '../llm/contracts.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import { checkCommitmentClose, commitmentStatusAt, resolveDue, type CommitmentSource, type OpenCommitment } from '../memory/commitments.ts';
import { trustedAsFactSource } from '../memory/disclosure.ts';
import { buildPromotionPrompt, planPasses } from '../memory/promotion-prompt.ts';
import {
  commitmentEndingTag,
  decidePromotions,
  endsWithThread,
  type PromotionPolicy,
  type SourceMessage,
} from '../memory/promotion-policy.ts';
import {
  closesThread,
  promotionDueAt,
  type PromotionCadence,
  type PromotionTrigger,
  type ThreadActivity,
} from '../memory/promotion-schedule.ts';
import { foldText } from '../memory/text-fold.ts';
import type { Db } from '../store/database.ts';
import {
  closeQuietThread,
  commitPass,
  loadActiveFacts,
  loadPromotionState,
  type CommitmentClose,
  type NewCommitment,
  type PromotionState,
  type ThreadEnding,
} from '../store/promotions.ts';
import { recordLlmCalls } from '../store/turns.ts';

export type { PromotionTrigger };

export interface PromotionDeps {
  db: Db;
  provider: LlmProvider;
  policy: PromotionPolicy;
  maxActiveFacts: number;
  cadence: PromotionCadence;
  /** One pass shows the model at most this many tokens of customer messages. */
  passTokens: number;
  logger: Logger;
  now: () => Date;
}

export type PromotionOutcome =
  | { kind: 'not-due'; due: { trigger: 'quiet' | 'resolved' | 'periodic'; at: Date } }
  | { kind: 'nothing-new'; closed: boolean }
  | {
      kind: 'promoted';
      runIds: string[];
      passes: number;
      covered: number;
      accepted: number;
      rejected: number;
      topic: string | null;
      activity: ThreadActivity;
    };

/** At most this many customer messages are read for one promotion call (the rest wait for the next). */
const MESSAGES_PER_CALL = 400;
/** At most this many passes in one call; a longer backlog continues on the next one. */
const PASSES_PER_CALL = 20;
const MAX_NEW_COMMITMENTS = 10;

export async function promoteThread(deps: PromotionDeps, threadId: string, trigger: PromotionTrigger): Promise<PromotionOutcome> {
  const { db } = deps;
  const now = deps.now();
  const state = await loadPromotionState(db, threadId, MESSAGES_PER_CALL);
  const { thread } = state;
  const activity: ThreadActivity = {
    lastMessageAt: thread.lastMessageAt,
    status: thread.state.status,
    uncovered: state.unseenTotal,
    oldestUncoveredAt: state.unseen[0]?.date ?? null,
  };
  if (trigger === 'quiet' || trigger === 'periodic') {
    const due = promotionDueAt(activity, deps.cadence);
    if (due.at > now) return { kind: 'not-due', due };
  }
  const closeAs = closesThread(trigger) ? (thread.state.status === 'resolved' ? 'resolved' : 'closed') : null;
  if (state.unseen.length === 0) {
    if (closeAs) await closeQuietThread(db, thread, closeAs, threadEnding(deps, state.thread.state.tags, state.commitments), now);
    return { kind: 'nothing-new', closed: closeAs !== null };
  }

  const passes = planPasses(state.unseen, deps.passTokens).slice(0, PASSES_PER_CALL);
  const runIds: string[] = [];
  let covered = 0;
  let accepted = 0;
  let rejected = 0;
  let topic = thread.topic;
  let replies = state.replies;
  let commitments = state.commitments;
  for (const [index, pass] of passes.entries()) {
    const last = index === passes.length - 1;
    const moreUnseen = state.unseenTotal - covered - pass.length > 0;
    const result = await runPass(deps, state, pass, replies, commitments, trigger, last && !moreUnseen ? closeAs : null, moreUnseen, now);
    runIds.push(result.runId);
    covered += pass.length;
    accepted += result.accepted;
    rejected += result.rejected;
    topic = result.topic ?? topic;
    // Later passes of the same call see the replies and commitments as this one left them.
    replies = [];
    commitments = commitments.filter((c) => !result.closedIds.has(c.id));
  }
  deps.logger.info('thread promoted', { threadId, trigger, passes: passes.length, covered, accepted, rejected });
  return {
    kind: 'promoted',
    runIds,
    passes: passes.length,
    covered,
    accepted,
    rejected,
    topic,
    activity: { ...activity, uncovered: state.unseenTotal - covered, oldestUncoveredAt: state.unseen[covered]?.date ?? null },
  };
}

interface PassResult {
  runId: string;
  accepted: number;
  rejected: number;
  topic: string | null;
  closedIds: Set<string>;
}

async function runPass(
  deps: PromotionDeps,
  state: PromotionState,
  pass: PromotionState['unseen'],
  replies: PromotionState['replies'],
  commitments: PromotionState['commitments'],
  trigger: PromotionTrigger,
  closeAs: 'resolved' | 'closed' | null,
  moreUnseen: boolean,
  now: Date,
): Promise<PassResult> {
  const { db } = deps;
  const { thread } = state;
  const profile = await loadActiveFacts(db, thread.entityId);
  const shownCommitments = commitments.map((c) => ({
    id: c.id,
    text: c.text,
    dueAt: c.dueAt,
    overdue: commitmentStatusAt(c, now) === 'overdue',
  }));
  const messages = pass.map((m) => ({ messageId: m.messageId, date: m.date, text: m.text }));
  const prompt = buildPromotionPrompt({ thread: thread.state, messages, replies, profile, commitments: shownCommitments });
  const answer = await deps.provider.threadPromotion({ prompt, thread: thread.state, messages, replies, commitments: shownCommitments });
  await recordLlmCalls(db, answer.calls, { provider: deps.provider.name, model: deps.provider.model, threadId: thread.id, at: now });

  const sources = new Map<string, SourceMessage>(
    pass.map((m) => [m.messageId, { text: m.text, date: m.date, unverified: !trustedAsFactSource(m, thread.entityId) }]),
  );
  const threadTags = thread.state.tags;
  const decisions = answer.ok
    ? decidePromotions({
        policy: deps.policy,
        candidates: answer.value.facts,
        messages: sources,
        existing: profile,
        maxActiveFacts: deps.maxActiveFacts,
        now,
        threadTags,
        threadEnded: closeAs !== null || thread.state.status === 'resolved' || thread.state.status === 'closed',
      })
    : [];
  const changes = answer.ok
    ? commitmentChanges(answer.value, pass, replies, commitments, threadTags, now, thread.entityId)
    : { created: [], closed: [] };
  const ending = threadEnding(deps, threadTags, commitments);
  const topic = answer.ok ? answer.value.topic.replace(/\s+/g, ' ').trim().slice(0, 120) || thread.topic : thread.topic;
  const runId = newId('pr');
  await commitPass(db, {
    runId,
    threadId: thread.id,
    entityId: thread.entityId,
    trigger,
    topic,
    policyVersion: deps.policy.version,
    promptTokens: answer.calls.reduce((s, c) => s + c.promptTokens, 0),
    completionTokens: answer.calls.reduce((s, c) => s + c.completionTokens, 0),
    covered: pass,
    decisions,
    newCommitments: changes.created,
    closedCommitments: changes.closed,
    error: answer.ok ? null : answer.error.slice(0, 500),
    moreUnseen,
    closeAs,
    ending,
    threadTags,
    now,
  });
  if (closeAs && (ending.facts.length > 0 || ending.commitments.length > 0 || ending.newCommitmentsTag)) {
    deps.logger.info('thread items ended with the thread', {
      threadId: thread.id,
      tags: [...new Set([...ending.facts.map((f) => f.tag), ...ending.commitments.map((c) => c.tag)])],
      factCategories: ending.facts.map((f) => f.category),
      commitments: ending.commitments.length,
    });
  }
  const accepted = decisions.filter((d) => d.accepted).length;
  return { runId, accepted, rejected: decisions.length - accepted, topic, closedIds: new Set(changes.closed.map((c) => c.id)) };
}

/**
 * What the policy's `resolved` tag lifetimes end when this thread is resolved or closed: the
 * categories of facts it taught, the open commitments carrying such a tag (their own or the
 * thread's), and whether the closing pass's own new commitments end too.
 */
function threadEnding(deps: PromotionDeps, threadTags: readonly string[], open: PromotionState['commitments']): ThreadEnding {
  const commitments = open.flatMap((c) => {
    const tag = commitmentEndingTag(deps.policy, c.tags, threadTags);
    return tag ? [{ id: c.id, tag }] : [];
  });
  return {
    facts: endsWithThread(deps.policy, threadTags).facts,
    commitments,
    newCommitmentsTag: commitmentEndingTag(deps.policy, threadTags, threadTags),
  };
}

/**
 * New commitments (deduplicated against the open ones, their due dates resolved against the
 * promising reply's date) and closings (each checked: an open commitment, evidence quoted from a
 * message of this pass or a reply shown, later than the promise).
 */
function commitmentChanges(
  answer: ThreadPromotion,
  pass: PromotionState['unseen'],
  replies: PromotionState['replies'],
  open: PromotionState['commitments'],
  threadTags: readonly string[],
  now: Date,
  entityId: string,
): { created: NewCommitment[]; closed: CommitmentClose[] } {
  // The customer's own messages and the team's proven replies may close a commitment (commitments.ts).
  const byMessageId = new Map<string, CommitmentSource>([
    ...pass.map((m) => [m.messageId, { text: m.text, date: m.date, proven: trustedAsFactSource(m, entityId) }] as const),
    ...replies.map((r) => [r.messageId, { text: r.text, date: r.date, proven: r.proven }] as const),
  ]);
  const known = new Set(open.map((c) => foldText(c.text)));
  const created: NewCommitment[] = [];
  const shownReplies = new Set(replies.map((r) => r.messageId));
  for (const c of answer.commitments) {
    // A promise is the team's: one citing anything but a reply shown (a customer's words, a
    // stranger's mail claiming a team address) is not a commitment.
    if (c.sourceMessageId && !shownReplies.has(c.sourceMessageId)) continue;
    const text = c.text.replace(/\s+/g, ' ').trim().slice(0, 300);
    const folded = foldText(text);
    if (!text || known.has(folded) || created.length >= MAX_NEW_COMMITMENTS) continue;
    known.add(folded);
    const promise = c.sourceMessageId ? byMessageId.get(c.sourceMessageId) : undefined;
    created.push({
      text,
      due: c.due?.slice(0, 80) ?? null,
      dueAt: resolveDue(c.due, promise?.date ?? now),
      sourceMessageId: promise ? c.sourceMessageId! : null,
      tags: threadTags,
    });
  }
  const openForClose: OpenCommitment[] = open.map((c) => ({ id: c.id, text: c.text, promisedAt: c.promisedAt }));
  const closed: CommitmentClose[] = [];
  for (const update of answer.commitmentUpdates) {
    const verdict = checkCommitmentClose(update, openForClose, byMessageId.get(update.sourceMessageId) ?? null);
    if (!verdict.ok || !verdict.commitment || closed.some((c) => c.id === verdict.commitment!.id)) continue;
    closed.push({ id: verdict.commitment.id, status: update.status, closedByMessageId: update.sourceMessageId, evidence: update.evidence });
  }
  return { created, closed };
}
