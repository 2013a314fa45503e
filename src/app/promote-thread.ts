/**
 * Promotion of one thread into its customer's profile: one `thread_promotion` call proposes
 * facts, the written policy decides each one, and every decision is stored with its rule.
 */
import { newId } from '../ids.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import { trustedAsFactSource } from '../memory/disclosure.ts';
import { buildPromotionPrompt } from '../memory/promotion-prompt.ts';
import { decidePromotions, type PromotionPolicy, type SourceMessage } from '../memory/promotion-policy.ts';
import { promotionDueAt, type PromotionTrigger } from '../memory/promotion-schedule.ts';
import type { Db } from '../store/database.ts';
import { commitPromotion, loadActiveFacts, loadPromotionInput } from '../store/promotions.ts';
import { recordLlmCalls } from '../store/turns.ts';

export type { PromotionTrigger };

export interface PromotionDeps {
  db: Db;
  provider: LlmProvider;
  policy: PromotionPolicy;
  maxActiveFacts: number;
  quietAfterMs: number;
  logger: Logger;
  now: () => Date;
}

export type PromotionOutcome =
  | { kind: 'not-quiet'; dueAt: Date }
  | { kind: 'nothing-new' }
  | { kind: 'promoted'; runId: string; accepted: number; rejected: number; topic: string | null };

const MAX_COMMITMENTS = 10;

export async function promoteThread(deps: PromotionDeps, threadId: string, trigger: PromotionTrigger): Promise<PromotionOutcome> {
  const { db } = deps;
  const now = deps.now();
  const { thread, messages, replies } = await loadPromotionInput(db, threadId);
  if (trigger === 'quiet') {
    const due = promotionDueAt({ lastMessageAt: thread.lastMessageAt, status: 'open' }, deps.quietAfterMs);
    if (due.at > now) return { kind: 'not-quiet', dueAt: due.at };
  }
  if (!thread.needsPromotion && trigger !== 'manual') return { kind: 'nothing-new' };

  const shown = messages.map((m) => ({ messageId: m.messageId, date: m.date, text: m.text }));
  const prompt = buildPromotionPrompt({ thread: thread.state, messages: shown, agentReplies: replies });
  const answer = await deps.provider.threadPromotion({ prompt, thread: thread.state, messages: shown, agentReplies: replies });
  await recordLlmCalls(db, answer.calls, { provider: deps.provider.name, model: deps.provider.model, threadId, at: now });

  const sources = new Map<string, SourceMessage>(
    messages.map((m) => [m.messageId, { text: m.text, date: m.date, unverified: !trustedAsFactSource(m, thread.entityId) }]),
  );
  const decisions = answer.ok
    ? decidePromotions({
        policy: deps.policy,
        candidates: answer.value.facts,
        messages: sources,
        existing: await loadActiveFacts(db, thread.entityId, thread.mailboxId),
        maxActiveFacts: deps.maxActiveFacts,
      })
    : [];
  const topic = answer.ok ? answer.value.topic.replace(/\s+/g, ' ').trim().slice(0, 120) || null : thread.topic;
  const closes = trigger === 'quiet' || trigger === 'resolved';
  const runId = newId('pr');
  await commitPromotion(db, {
    runId,
    threadId,
    entityId: thread.entityId,
    trigger,
    topic,
    policyVersion: deps.policy.version,
    promptTokens: answer.calls.reduce((s, c) => s + c.promptTokens, 0),
    completionTokens: answer.calls.reduce((s, c) => s + c.completionTokens, 0),
    decisions,
    commitments: answer.ok
      ? answer.value.commitments
          .filter((c) => c.text.trim())
          .slice(0, MAX_COMMITMENTS)
          .map((c) => ({ text: c.text.replace(/\s+/g, ' ').trim().slice(0, 300), due: c.due?.slice(0, 40) ?? null }))
      : null,
    closeAs: closes ? (thread.state.status === 'resolved' ? 'resolved' : 'closed') : null,
    now,
  });

  const accepted = decisions.filter((d) => d.accepted).length;
  deps.logger.info('thread promoted', { threadId, trigger, accepted, rejected: decisions.length - accepted, ok: answer.ok });
  return { kind: 'promoted', runId, accepted, rejected: decisions.length - accepted, topic };
}
