/**
 * One reply turn of a thread: load thread and profile, assemble the context, call the model once,
 * apply the turn to thread state, store exactly one draft. Covers every message that one sender
 * had waiting when it started (a burst gets one coherent answer).
 */
import { newId } from '../ids.ts';
import type { LlmCallRecord, LlmOutcome, LlmProvider, TurnImages } from '../llm/provider.ts';
import { withSensitiveNotice } from '../llm/sensitive-notice.ts';
import type { Logger } from '../logger.ts';
import { domainOf, FREE_MAIL_DOMAINS } from '../mail/addresses.ts';
import { composeReply, type ComposedReply } from '../mail/compose-reply.ts';
import { agentMessageId } from '../mail/message-id.ts';
import { assembleTurnContext, BUFFER_MAX_MESSAGES, type ContextLimits } from '../memory/context.ts';
import { withheldReason, type CustomerIdentity } from '../memory/disclosure.ts';
import { decideCc, type KeepCcMode } from '../memory/reply-cc.ts';
import {
  freshLoopState,
  loopScopes,
  loopStop,
  markStopped,
  observeInbound,
  observeReply,
  type LoopLimits,
  type LoopState,
} from '../memory/loop-guard.ts';
import type { ThreadActivity } from '../memory/promotion-schedule.ts';
import { reviewReply } from '../memory/reply-guard.ts';
import { checkGrounding } from '../memory/grounding.ts';
import { reviewDraftSafety } from '../memory/draft-safety.ts';
import { kbQueryTerms, knowledgeQuery, type KnowledgePassage } from '../memory/knowledge.ts';
import { traceProfileFacts, type ContextTrace } from '../memory/profile-trace.ts';
import { activeFacts } from '../memory/profile-view.ts';
import type { MessageTurn } from '../llm/contracts.ts';
import { searchKbPassages } from '../store/knowledge.ts';
import type { KnowledgeSearch } from './knowledge-search.ts';
import { applyPins, applyTurnUpdate, buildCompressionPrompt, type TurnStateUpdate } from '../memory/thread-state.ts';
import { countTokens } from '../memory/tokens.ts';
import type { Db } from '../store/database.ts';
import type { SqlExecutor } from '../store/sql.ts';
import { beginTurn, commitTurnSql, loadTurnContext, type TurnContextRecords } from '../store/turn-sql.ts';
import type { ThreadState } from '../memory/types.ts';
import {
  countPendingReplies,
  findRunningTurn,
  finishTurnWithoutReply,
  loadThread,
  loadTurnMessages,
  type DraftFlag,
  type ThreadRecord,
  type TurnMessage,
} from '../store/turns.ts';

export interface TurnSettings {
  supportAddress: string;
  supportName: string;
  messageIdSecret: string;
  replyMode: 'draft' | 'send';
  /** The mailbox's language for a customer whose own is unclear. */
  language?: string | undefined;
  limits: ContextLimits;
  replyLimitPerHour: number;
  replyLimitPerDay: number;
  loop: LoopLimits;
  /** Stored customer addresses are plus-folded (FOLD_PLUS_ADDRESSES). */
  foldPlusAddresses: boolean;
  /** Free-mail domains beyond the built-in list (FREE_MAIL_DOMAINS): no per-domain loop counting there. */
  extraFreeMailDomains: readonly string[];
  /** Knowledge passages per turn and their share of the prompt (KB_PASSAGES, KB_TOKEN_CAP); none when absent. */
  knowledge?: { tokenCap: number; passages: number };
  /** The policy's tag vocabulary (tag → when it applies), offered to the model. */
  tagVocabulary: Readonly<Record<string, string>>;
  /** Who the reply keeps in Cc (REPLY_KEEP_CC, REPLY_CC_MAX); nobody when absent. */
  cc?: { mode: KeepCcMode; max: number };
  /** The team's own addresses (STAFF_ADDRESSES): never copied on a reply. */
  staffAddresses?: readonly string[];
}

export interface TurnDeps {
  db: Db;
  /** Plain SQL on the same database (`Database.sql`): a turn's three round trips. */
  sql: SqlExecutor;
  /** The mailbox the agent serves (loop-guard scopes are per mailbox). */
  mailboxId: string;
  provider: LlmProvider;
  settings: TurnSettings;
  logger: Logger;
  now: () => Date;
  /** Knowledge retrieval (lexical, or fused with embeddings); the lexical search alone when absent. */
  knowledge?: KnowledgeSearch;
  /** The current turn's images for a vision-capable model (OPENAI_VISION); images are named only when absent. */
  images?: (messages: readonly TurnMessage[]) => Promise<TurnImages>;
}

/**
 * What a turn did, with what the pipeline needs to go on: whether mail is still waiting in the
 * thread (another sender, or mail that arrived meanwhile) and when the thread last heard from
 * its customer (for the quiet rule).
 */
export type TurnOutcome =
  | { kind: 'nothing-pending' }
  | { kind: 'limited'; turnId: string; reason: string; handedOff: boolean; morePending: boolean }
  | {
      kind: 'drafted';
      turnId: string;
      draftId: string;
      needsHuman: boolean;
      resolved: boolean;
      queuedToSend: boolean;
      promptTokens: number;
      morePending: boolean;
      lastMessageAt: Date;
      /** What decides the thread's next promotion pass. */
      activity: ThreadActivity;
      /** Set when the model asked for a promotion pass (something durable was said). */
      checkpoint: string | null;
    };

const HOUR = 3_600_000;

export async function handleThreadTurn(deps: TurnDeps, threadId: string): Promise<TurnOutcome> {
  const { db, settings } = deps;
  const now = deps.now();
  const started = await beginTurn(deps.sql, threadId, newId('turn'), now);
  if (!started) return { kind: 'nothing-pending' };
  const { turnId, messages: emails } = started;
  const parent = emails.at(-1)!;

  const recipients = [replyRecipient(parent)];
  const context = await loadTurnContext(deps.sql, {
    threadId,
    turnId,
    bufferMessages: settings.limits.bufferTokenCap > 0 ? BUFFER_MAX_MESSAGES : 0,
    recipient: recipients[0]!,
    loopScopes: loopScopesFor(deps, threadId, recipients),
    hourAgo: new Date(now.getTime() - HOUR),
    dayAgo: new Date(now.getTime() - 24 * HOUR),
    now,
  });
  const { thread } = context;
  const customer = {
    addresses: new Set(context.customer.addresses),
    domain: context.customer.domain,
    foldPlus: settings.foldPlusAddresses,
  };
  const reply = { ...replyTo(parent, thread), cc: replyCc(deps, parent, customer) };

  const limit = replyLimitReached(deps.settings, reply.to, context.recentReplies);
  const loopStates = observedLoopStates(deps, threadId, recipients, context.loopStates, emails, now);
  const loop = limit ? null : loopStop(loopStates, settings.loop);
  if (limit || loop) {
    const reason = limit ? `reply limit: ${limit}` : loop!.reason;
    const handedOff = loop?.firstStop ?? false;
    await finishTurnWithoutReply(db, {
      turnId,
      threadId,
      reason,
      handoff: handedOff,
      loopStates: markStopped(loopStates, settings.loop, now),
      now,
    });
    deps.logger.warn(handedOff ? 'no reply; thread handed to a person' : 'no reply', { threadId, reason });
    return { kind: 'limited', turnId, reason, handedOff, morePending: (await countPendingReplies(db, threadId)) > 0 };
  }

  // Everyone who will read the reply counts: a Cc who is not the customer withholds the profile.
  const withheld = withheldReason({ emails, recipients: [...recipients, ...reply.cc], customer });
  const profile = withheld ? null : context.profile;
  const knowledge = await findKnowledge(deps, thread.state, emails, withheld !== null);
  const prompt = assembleTurnContext({
    supportName: settings.supportName,
    supportAddress: settings.supportAddress,
    defaultLanguage: settings.language,
    profile,
    withheldReason: withheld,
    thread: thread.state,
    // The buffer is thread history: withheld with the rest of it.
    buffer: withheld ? [] : context.buffer,
    tagVocabulary: settings.tagVocabulary,
    emails,
    now,
    limits: settings.limits,
    ...(knowledge.length > 0 ? { knowledge: { passages: knowledge, tokenCap: settings.knowledge?.tokenCap ?? 0 } } : {}),
  });

  const answered = await deps.provider.messageTurn({
    prompt,
    thread: withheld ? { ...thread.state, summary: '', openItems: [] } : thread.state,
    profile,
    emails,
    supportName: settings.supportName,
    summaryTokenCap: settings.limits.summaryTokenCap,
    knowledge: prompt.passages,
    ...(deps.images ? { images: await deps.images(emails) } : {}),
  });
  const answer = answered.ok && !withheld ? await withSummaryInCap(deps, threadId, thread.state, answered) : answered;
  // A turn whose context was withheld never rewrites the thread's notes.
  const nextState = answer.ok && !withheld ? nextThreadState(deps, threadId, thread.state, answer.value) : thread.state;
  // A customer who sent card details or a password is told not to, whatever the model wrote.
  const body = answer.ok
    ? withSensitiveNotice(answer.value.reply.body, emails)
    : `[The agent could not draft this reply: the model's answer was invalid twice (${answer.error}). Please answer this customer yourself.]`;
  // The model's own needsHuman is advice; the outbound guard decides whether a person must look.
  const review = answer.ok ? reviewReply({ body, context: prompt.user, now }) : null;
  const flags: DraftFlag[] = review ? review.findings.map(({ rule, excerpt, reason }) => ({ rule, excerpt, reason })) : [];
  if (answer.ok && answer.value.reply.needsHuman)
    flags.unshift({ rule: 'model-asked', excerpt: '', reason: 'the model asked for a person to handle this' });
  // Every claim must rest on a source the prompt held (src/memory/grounding.ts).
  const grounding = answer.ok
    ? checkGrounding({
        body,
        citations: answer.value.citations,
        passages: prompt.passages,
        facts: profile ? activeFacts(profile, now).map((f) => ({ key: f.key, value: f.value })) : [],
        messages: emails.map((e) => ({ messageId: e.messageId, text: e.text })),
        notes: withheld ? '' : [thread.state.summary, ...thread.state.openItems].join('\n'),
      })
    : null;
  if (grounding) flags.push(...grounding.findings);
  // Safety rules on the draft whatever wrote it (src/memory/draft-safety.ts): no request for card
  // data or secrets, no disguised or lookalike links, no hidden characters.
  const safety = answer.ok
    ? reviewDraftSafety({
        body,
        ownDomains: [settings.supportAddress, ...(settings.staffAddresses ?? [])].map(domainOf),
        referenceTexts: prompt.passages.map((p) => p.text),
      })
    : [];
  flags.push(...safety);
  if (!answer.ok) flags.push({ rule: 'invalid-answer', excerpt: '', reason: answer.error.slice(0, 300) });
  // A promise the team has not kept by its due date needs a person, whatever the model thinks.
  const overdue = withheld ? [] : context.profile.outstandingCommitments.filter((c) => c.overdue);
  if (overdue.length > 0) {
    flags.push({
      rule: 'commitment-overdue',
      excerpt: overdue[0]!.text.slice(0, 160),
      reason: `${overdue.length} promise(s) to this customer are past their due date`,
    });
  }
  const needsHuman =
    !answer.ok ||
    answer.value.reply.needsHuman ||
    (review?.needsHuman ?? false) ||
    (grounding?.findings.length ?? 0) > 0 ||
    safety.length > 0 ||
    overdue.length > 0;
  const queuedToSend = settings.replyMode === 'send' && !needsHuman;
  const { draftId, pending } = await storeDraft(deps, {
    turnId,
    thread,
    nextState,
    reply,
    body,
    needsHuman,
    flags,
    citations: answer.ok ? answer.value.citations : [],
    queuedToSend,
    turnStatus: needsHuman ? 'needs_human' : 'drafted',
    prompt: `${prompt.system}\n\n${prompt.user}`,
    promptTokens: prompt.promptTokens,
    contextTrace: {
      tags: thread.state.tags,
      facts: withheld
        ? traceProfileFacts({ facts: context.profile.facts, currentTags: thread.state.tags, now, kept: 0, withheldReason: withheld })
        : prompt.factTrace,
      passages: prompt.passages.map((p, i) => ({ id: p.id, title: p.title, titlePath: p.titlePath, rank: i + 1, score: p.score })),
      parts: prompt.parts,
    },
    completionTokens: answer.calls.reduce((sum, c) => sum + c.completionTokens, 0),
    error: answer.ok ? null : answer.error,
    loopStates: loopStates.map((s) => observeReply(s, body, now)),
    calls: answer.calls,
    now,
  });

  deps.logger.info('turn drafted', {
    threadId,
    turnId,
    draftId,
    needsHuman,
    flags: flags.map((f) => f.rule),
    promptTokens: prompt.promptTokens,
    parts: Object.fromEntries(Object.entries(prompt.parts).map(([part, { tokens }]) => [part, tokens])),
    trimmed: prompt.trimmed,
  });
  return {
    kind: 'drafted',
    turnId,
    draftId,
    needsHuman,
    resolved: nextState.status === 'resolved',
    queuedToSend,
    promptTokens: prompt.promptTokens,
    morePending: pending > 0,
    lastMessageAt: thread.lastMessageAt,
    activity: {
      lastMessageAt: thread.lastMessageAt,
      status: nextState.status,
      uncovered: context.unseen.count,
      oldestUncoveredAt: context.unseen.oldestAt,
    },
    checkpoint: answer.ok && !withheld ? (answer.value.checkpoint?.reason.slice(0, 200) ?? null) : null,
  };
}

/**
 * The knowledge passages for this turn: searched with the subject, the newest email and (unless
 * the context is withheld) the thread's open items, intent and tags. The knowledge base is the
 * team's own public text, so a withheld profile does not withhold it.
 */
async function findKnowledge(
  deps: TurnDeps,
  state: ThreadState,
  emails: readonly TurnMessage[],
  withheld: boolean,
): Promise<KnowledgePassage[]> {
  const settings = deps.settings.knowledge;
  if (!settings || settings.passages === 0 || settings.tokenCap === 0) return [];
  const query = knowledgeQuery({
    subject: state.subject,
    latestText: emails.at(-1)?.text ?? '',
    openItems: withheld ? [] : state.openItems,
    currentIntent: withheld ? '' : state.currentIntent,
    tags: withheld ? [] : state.tags,
  });
  if (deps.knowledge) return (await deps.knowledge.search(query, settings.passages)).hits;
  return searchKbPassages(deps.sql, kbQueryTerms(query), settings.passages);
}

/**
 * When the model's summary outgrew its cap, one extra call asks it for a shorter rewrite that
 * keeps the pinned and open items; a rewrite still too long (or a failed call) leaves the
 * recency cut in `applyTurnUpdate` as the last resort. The extra call is recorded with the turn's.
 */
async function withSummaryInCap(
  deps: TurnDeps,
  threadId: string,
  previous: ThreadState,
  answer: Extract<LlmOutcome<MessageTurn>, { ok: true }>,
): Promise<Extract<LlmOutcome<MessageTurn>, { ok: true }>> {
  const capTokens = deps.settings.limits.summaryTokenCap;
  if (countTokens(answer.value.summary) <= capTokens) return answer;
  const pinned = applyPins(previous.pinnedItems, answer.value.pin, answer.value.unpin).pinned;
  const prompt = buildCompressionPrompt({ summary: answer.value.summary, capTokens, pinned, openItems: answer.value.openItems });
  try {
    const rewritten = await deps.provider.compressSummary({ prompt, summary: answer.value.summary, capTokens, pinned });
    const calls = [...answer.calls, ...rewritten.calls];
    if (!rewritten.ok) return { ...answer, calls };
    return { ...answer, value: { ...answer.value, summary: rewritten.value.summary }, calls };
  } catch (error) {
    // The reply is ready: an unreachable model costs only the rewrite (the recency cut stands in).
    deps.logger.warn('summary rewrite failed; cut by recency', {
      threadId,
      error: error instanceof Error ? error.message.slice(0, 200) : 'unknown',
    });
    return answer;
  }
}

/** The thread's notes after the model's answer; pinned items pushed out by the cap are logged. */
function nextThreadState(deps: TurnDeps, threadId: string, previous: ThreadState, update: TurnStateUpdate): ThreadState {
  const { state, droppedPins } = applyTurnUpdate(previous, update, deps.settings.limits.summaryTokenCap);
  if (droppedPins.length > 0)
    deps.logger.info('pinned items dropped: the list is full (oldest first)', { threadId, dropped: droppedPins.length });
  return state;
}

/** Where the reply goes: the parent's Reply-To when present, else its From (see composeReply). */
function replyRecipient(parent: TurnMessage): string {
  return parent.replyTo ?? parent.fromAddress;
}

/**
 * Who the reply keeps in Cc: the answered message's To and Cc under the Cc policy
 * (src/memory/reply-cc.ts); what was left out is logged by reason, never by address.
 */
function replyCc(deps: TurnDeps, parent: TurnMessage, customer: CustomerIdentity): string[] {
  const { settings } = deps;
  if (!settings.cc || settings.cc.mode === 'none') return [];
  const extra = new Set(settings.extraFreeMailDomains);
  const decision = decideCc({
    mode: settings.cc.mode,
    to: parent.toAddresses,
    cc: parent.ccAddresses,
    replyTo: replyRecipient(parent),
    sender: parent,
    customer,
    ownAddresses: [settings.supportAddress, ...(settings.staffAddresses ?? [])],
    isFreeMailDomain: (domain) => FREE_MAIL_DOMAINS.has(domain) || extra.has(domain),
    max: settings.cc.max,
  });
  const left = decision.dropped.filter((d) => d.reason !== 'our own address');
  if (left.length > 0) {
    const reasons: Record<string, number> = {};
    for (const d of left) reasons[d.reason] = (reasons[d.reason] ?? 0) + 1;
    deps.logger.info('Cc left out of the reply', { kept: decision.cc.length, reasons });
  }
  return decision.cc;
}

function replyTo(parent: TurnMessage, thread: ThreadRecord): ComposedReply {
  return composeReply({
    messageId: parent.messageId,
    syntheticId: parent.syntheticId,
    references: parent.references,
    subject: parent.subject || thread.state.subject,
    fromAddress: parent.fromAddress,
    replyTo: parent.replyTo,
  });
}

function loopScopesFor(deps: TurnDeps, threadId: string, recipients: string[]): string[] {
  const extra = new Set(deps.settings.extraFreeMailDomains);
  return loopScopes({
    mailboxId: deps.mailboxId,
    threadId,
    recipients,
    isFreeMailDomain: (domain) => FREE_MAIL_DOMAINS.has(domain) || extra.has(domain) || domain === domainOf(deps.settings.supportAddress),
  });
}

/** The loop guard's counters for this reply's scopes, after seeing the turn's inbound messages. */
function observedLoopStates(
  deps: TurnDeps,
  threadId: string,
  recipients: string[],
  stored: LoopState[],
  emails: TurnMessage[],
  now: Date,
): LoopState[] {
  const byScope = new Map(stored.map((s) => [s.scope, s]));
  return loopScopesFor(deps, threadId, recipients).map((scope) =>
    observeInbound(
      byScope.get(scope) ?? freshLoopState(scope, now),
      emails.map((e) => e.text),
      now,
      deps.settings.loop,
    ),
  );
}

interface DraftToStore {
  turnId: string;
  thread: ThreadRecord;
  nextState: ThreadState;
  reply: ComposedReply & { cc?: readonly string[] };
  body: string;
  needsHuman: boolean;
  flags: DraftFlag[];
  citations?: MessageTurn['citations'];
  queuedToSend: boolean;
  turnStatus: 'drafted' | 'needs_human' | 'failed';
  prompt: string | null;
  promptTokens: number;
  /** Why each profile fact was or was not in the prompt; null when there was no prompt. */
  contextTrace: ContextTrace | null;
  completionTokens: number;
  error: string | null;
  loopStates: readonly LoopState[];
  calls: readonly LlmCallRecord[];
  now: Date;
}

/** Commits the turn with its one draft (src/store/turn-sql.ts); how many messages still wait. */
async function storeDraft(deps: TurnDeps, d: DraftToStore): Promise<{ draftId: string; pending: number }> {
  const { settings } = deps;
  const draftId = newId('d');
  const { pending } = await commitTurnSql(deps.sql, {
    turnId: d.turnId,
    thread: { id: d.thread.id, mailboxId: d.thread.mailboxId, version: d.thread.version },
    nextState: d.nextState,
    draft: {
      id: draftId,
      toAddress: d.reply.to,
      ccAddresses: d.reply.cc ?? [],
      subject: d.reply.subject,
      body: d.body,
      messageId: agentMessageId(settings.messageIdSecret, d.thread.id, domainOf(settings.supportAddress)),
      inReplyTo: d.reply.inReplyTo,
      references: d.reply.references,
      needsHuman: d.needsHuman,
      status: d.queuedToSend ? 'queued' : 'draft',
      flags: d.flags,
      citations: d.citations ?? [],
    },
    outboundId: newId('m'),
    from: { address: settings.supportAddress, name: settings.supportName },
    turn: {
      status: d.turnStatus,
      provider: deps.provider.name,
      model: deps.provider.model,
      prompt: d.prompt,
      promptTokens: d.promptTokens,
      completionTokens: d.completionTokens,
      error: d.error,
      contextTrace: d.contextTrace,
    },
    loopStates: d.loopStates,
    calls: d.calls.map((call) => ({ ...call, id: newId('llm') })),
    now: d.now,
  });
  return { draftId, pending };
}

/**
 * When a turn cannot finish (the LLM stayed unreachable through every retry), the customer is
 * not left unanswered and unnoticed: the turn ends with a draft flagged for a person.
 */
export async function handTurnToHuman(deps: TurnDeps, threadId: string, reason: string): Promise<TurnOutcome | null> {
  const turnId = await findRunningTurn(deps.db, threadId);
  if (!turnId) return null;
  const thread = await loadThread(deps.db, threadId);
  const parent = (await loadTurnMessages(deps.db, turnId)).at(-1);
  if (!thread || !parent) return null;
  const { draftId, pending } = await storeDraft(deps, {
    turnId,
    thread,
    nextState: thread.state,
    reply: replyTo(parent, thread),
    body: `[The agent could not draft this reply (${reason.slice(0, 300)}). Please answer this customer yourself.]`,
    needsHuman: true,
    flags: [{ rule: 'turn-failed', excerpt: '', reason: reason.slice(0, 300) }],
    queuedToSend: false,
    turnStatus: 'failed',
    prompt: null,
    promptTokens: 0,
    contextTrace: null,
    completionTokens: 0,
    error: reason.slice(0, 1000),
    loopStates: [],
    calls: [],
    now: deps.now(),
  });
  return {
    kind: 'drafted',
    turnId,
    draftId,
    needsHuman: true,
    resolved: false,
    queuedToSend: false,
    promptTokens: 0,
    morePending: pending > 0,
    lastMessageAt: thread.lastMessageAt,
    // The failed turn's messages still wait for a pass; the quiet rule decides when.
    activity: { lastMessageAt: thread.lastMessageAt, status: thread.state.status, uncovered: 0, oldestUncoveredAt: null },
    checkpoint: null,
  };
}

function replyLimitReached(settings: TurnSettings, to: string, recent: TurnContextRecords['recentReplies']): string | null {
  const { replyLimitPerHour: perHour, replyLimitPerDay: perDay } = settings;
  if (recent.toRecipientHour >= perHour) return `${recent.toRecipientHour} replies to ${to} in the last hour (limit ${perHour})`;
  if (recent.inThreadHour >= perHour) return `${recent.inThreadHour} replies in this thread in the last hour (limit ${perHour})`;
  if (recent.toRecipientDay >= perDay) return `${recent.toRecipientDay} replies to ${to} in the last day (limit ${perDay})`;
  if (recent.inThreadDay >= perDay) return `${recent.inThreadDay} replies in this thread in the last day (limit ${perDay})`;
  return null;
}
