/**
 * One reply turn of a thread: load thread and profile, assemble the context, call the model once,
 * apply the turn to thread state, store exactly one draft. Covers every message that was waiting
 * when it started (a burst gets one coherent answer).
 */
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import { domainOf } from '../mail/addresses.ts';
import { composeReply, type ComposedReply } from '../mail/compose-reply.ts';
import { agentMessageId } from '../mail/message-id.ts';
import { assembleTurnContext, type ContextLimits } from '../memory/context.ts';
import { withheldReason } from '../memory/disclosure.ts';
import { applyTurnUpdate } from '../memory/thread-state.ts';
import type { Db } from '../store/database.ts';
import { loadProfile } from '../store/profiles.ts';
import type { ThreadState } from '../memory/types.ts';
import { countRecentReplies, loadThread, loadTurnMessages, recordLlmCalls, startOrResumeTurn, type ThreadRecord, type TurnMessage } from '../store/turns.ts';

export interface TurnSettings {
  supportAddress: string;
  supportName: string;
  messageIdSecret: string;
  replyMode: 'draft' | 'send';
  limits: ContextLimits;
  replyLimitPerHour: number;
  replyLimitPerDay: number;
}

export interface TurnDeps {
  db: Db;
  provider: LlmProvider;
  settings: TurnSettings;
  logger: Logger;
  now: () => Date;
}

export type TurnOutcome =
  | { kind: 'nothing-pending' }
  | { kind: 'limited'; turnId: string; reason: string }
  | { kind: 'drafted'; turnId: string; draftId: string; needsHuman: boolean; resolved: boolean; queuedToSend: boolean; promptTokens: number };

const HOUR = 3_600_000;

export async function handleThreadTurn(deps: TurnDeps, threadId: string): Promise<TurnOutcome> {
  const { db, settings } = deps;
  const now = deps.now();
  const started = await startOrResumeTurn(db, threadId, now);
  if (!started) return { kind: 'nothing-pending' };
  const { turnId } = started;

  const thread = await loadThread(db, threadId);
  if (!thread) throw new AppError('NOT_FOUND', `thread ${threadId} no longer exists`);
  const emails = await loadTurnMessages(db, turnId);
  const parent = emails.at(-1);
  if (!parent) throw new AppError('CONFLICT', `turn ${turnId} has no messages`);

  const reply = replyTo(parent, thread);

  const limit = await replyLimitReached(deps, reply.to, threadId, now);
  if (limit) {
    await finishTurnWithoutReply(db, turnId, limit, now);
    deps.logger.warn('reply limit reached; no reply', { threadId, reason: limit });
    return { kind: 'limited', turnId, reason: limit };
  }

  const withheld = withheldReason(emails);
  const profile = withheld ? null : await loadProfile(db, thread.entityId);
  const prompt = assembleTurnContext({
    supportName: settings.supportName,
    supportAddress: settings.supportAddress,
    profile,
    withheldReason: withheld,
    thread: thread.state,
    emails,
    now,
    limits: settings.limits,
  });

  const answer = await deps.provider.messageTurn({
    prompt,
    thread: withheld ? { ...thread.state, summary: '', openItems: [] } : thread.state,
    profile,
    emails,
    supportName: settings.supportName,
    summaryTokenCap: settings.limits.summaryTokenCap,
  });
  await recordLlmCalls(db, answer.calls, { provider: deps.provider.name, model: deps.provider.model, threadId, at: now });

  // An unverified sender's turn never rewrites the thread's notes.
  const nextState = answer.ok && !withheld ? applyTurnUpdate(thread.state, answer.value, settings.limits.summaryTokenCap) : thread.state;
  const needsHuman = answer.ok ? answer.value.reply.needsHuman : true;
  const body = answer.ok
    ? answer.value.reply.body
    : `[The agent could not draft this reply: the model's answer was invalid twice (${answer.error}). Please answer this customer yourself.]`;
  const queuedToSend = settings.replyMode === 'send' && !needsHuman;
  const draftId = await commitTurn(deps, {
    turnId,
    thread,
    nextState,
    reply,
    body,
    needsHuman,
    queuedToSend,
    turnStatus: needsHuman ? 'needs_human' : 'drafted',
    prompt: `${prompt.system}\n\n${prompt.user}`,
    promptTokens: prompt.promptTokens,
    completionTokens: answer.calls.reduce((sum, c) => sum + c.completionTokens, 0),
    error: answer.ok ? null : answer.error,
    now,
  });

  deps.logger.info('turn drafted', { threadId, turnId, draftId, needsHuman, promptTokens: prompt.promptTokens, trimmed: prompt.trimmed });
  return {
    kind: 'drafted',
    turnId,
    draftId,
    needsHuman,
    resolved: nextState.status === 'resolved',
    queuedToSend,
    promptTokens: prompt.promptTokens,
  };
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

interface TurnCommit {
  turnId: string;
  thread: ThreadRecord;
  nextState: ThreadState;
  reply: ComposedReply;
  body: string;
  needsHuman: boolean;
  queuedToSend: boolean;
  turnStatus: 'drafted' | 'needs_human' | 'failed';
  prompt: string | null;
  promptTokens: number;
  completionTokens: number;
  error: string | null;
  now: Date;
}

/**
 * Stores the turn's result atomically: thread state (with a version check), exactly one draft
 * (unique per turn), the agent's outbound message so replies to it thread, and the turn record.
 */
async function commitTurn(deps: TurnDeps, c: TurnCommit): Promise<string> {
  const { settings } = deps;
  const threadId = c.thread.id;
  const draftId = newId('d');
  const messageId = agentMessageId(settings.messageIdSecret, threadId, domainOf(settings.supportAddress));
  const status = c.queuedToSend ? 'queued' : 'draft';
  await deps.db.$transaction(async (tx) => {
    // Optimistic concurrency: a thread changed under us (a console edit, a concurrent turn) retries the turn.
    const updated = await tx.thread.updateMany({
      where: { id: threadId, version: c.thread.version },
      data: {
        summary: c.nextState.summary,
        openItems: c.nextState.openItems,
        currentIntent: c.nextState.currentIntent,
        tags: c.nextState.tags,
        status: c.nextState.status,
        closedAt: c.nextState.status === 'resolved' ? c.now : null,
        version: { increment: 1 },
      },
    });
    if (updated.count === 0) throw new AppError('CONFLICT', `thread ${threadId} changed during the turn; retrying`);
    await tx.draft.create({
      data: {
        id: draftId,
        turnId: c.turnId,
        threadId,
        mailboxId: c.thread.mailboxId,
        toAddress: c.reply.to,
        subject: c.reply.subject,
        body: c.body,
        messageId,
        inReplyTo: c.reply.inReplyTo,
        references: c.reply.references,
        needsHuman: c.needsHuman,
        status,
        createdAt: c.now,
      },
    });
    // The agent's reply is part of the thread, so the customer's answer to it threads by headers.
    await tx.message.create({
      data: {
        id: newId('m'),
        mailboxId: c.thread.mailboxId,
        messageId,
        threadId,
        direction: 'outbound',
        source: 'agent',
        fromAddress: settings.supportAddress,
        fromName: settings.supportName,
        toAddresses: [c.reply.to],
        subject: c.reply.subject,
        inReplyTo: c.reply.inReplyTo,
        references: c.reply.references,
        sentAt: c.now,
        receivedAt: c.now,
        bodyText: c.body,
        extractedText: c.body,
        status,
      },
    });
    await tx.threadKey.createMany({ data: [{ mailboxId: c.thread.mailboxId, messageId, threadId, kind: 'outbound' }], skipDuplicates: true });
    await tx.message.updateMany({ where: { turnId: c.turnId }, data: { status: 'replied' } });
    await tx.turn.update({
      where: { id: c.turnId },
      data: {
        status: c.turnStatus,
        provider: deps.provider.name,
        model: deps.provider.model,
        prompt: c.prompt,
        promptTokens: c.promptTokens,
        completionTokens: c.completionTokens,
        error: c.error,
        finishedAt: c.now,
      },
    });
  });
  return draftId;
}

/**
 * When a turn cannot finish (the LLM stayed unreachable through every retry), the customer is
 * not left unanswered and unnoticed: the turn ends with a draft flagged for a person.
 */
export async function handTurnToHuman(deps: TurnDeps, threadId: string, reason: string): Promise<string | null> {
  const running = await deps.db.turn.findFirst({ where: { threadId, status: 'running' }, select: { id: true } });
  if (!running) return null;
  const thread = await loadThread(deps.db, threadId);
  const parent = (await loadTurnMessages(deps.db, running.id)).at(-1);
  if (!thread || !parent) return null;
  const reply = replyTo(parent, thread);
  return commitTurn(deps, {
    turnId: running.id,
    thread,
    nextState: thread.state,
    reply,
    body: `[The agent could not draft this reply (${reason.slice(0, 300)}). Please answer this customer yourself.]`,
    needsHuman: true,
    queuedToSend: false,
    turnStatus: 'failed',
    prompt: null,
    promptTokens: 0,
    completionTokens: 0,
    error: reason.slice(0, 1000),
    now: deps.now(),
  });
}

async function replyLimitReached(deps: TurnDeps, to: string, threadId: string, now: Date): Promise<string | null> {
  const { replyLimitPerHour: perHour, replyLimitPerDay: perDay } = deps.settings;
  const recent = await countRecentReplies(deps.db, { to, threadId, hourAgo: new Date(now.getTime() - HOUR), dayAgo: new Date(now.getTime() - 24 * HOUR) });
  if (recent.toRecipientHour >= perHour) return `${recent.toRecipientHour} replies to ${to} in the last hour (limit ${perHour})`;
  if (recent.inThreadHour >= perHour) return `${recent.inThreadHour} replies in this thread in the last hour (limit ${perHour})`;
  if (recent.toRecipientDay >= perDay) return `${recent.toRecipientDay} replies to ${to} in the last day (limit ${perDay})`;
  if (recent.inThreadDay >= perDay) return `${recent.inThreadDay} replies in this thread in the last day (limit ${perDay})`;
  return null;
}

async function finishTurnWithoutReply(db: Db, turnId: string, reason: string, now: Date): Promise<void> {
  await db.$transaction([
    db.message.updateMany({ where: { turnId }, data: { status: 'no_reply', skipDetail: `reply limit: ${reason}` } }),
    db.turn.update({ where: { id: turnId }, data: { status: 'skipped', error: `reply limit: ${reason}`, finishedAt: now } }),
  ]);
}

export type { TurnMessage };
