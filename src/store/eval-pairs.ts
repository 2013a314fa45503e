/**
 * What `support-agent eval` reads back after replaying a history: for a customer mail the team
 * answered, the agent's draft (through the turn that covered the mail), the turn's prompt, tokens
 * and model calls, the team's stored reply, and the profile facts held when the draft was made.
 */
import type { DbClient } from './client.ts';

export interface EvalPairRecord {
  threadId: string;
  draft: { id: string; body: string; needsHuman: boolean } | null;
  /** `failed`: the model could not draft (the draft is a note for a person, not a model's reply). */
  turn: { prompt: string; promptTokens: number; completionTokens: number; modelCalls: number; failed: boolean } | null;
  teamReply: string | null;
  profileValues: string[];
}

export async function loadEvalPair(
  db: DbClient,
  mailboxId: string,
  customerMessageId: string,
  replyMessageId: string,
): Promise<EvalPairRecord | null> {
  const customer = await db.message.findUnique({
    where: { mailboxId_messageId: { mailboxId, messageId: customerMessageId } },
    select: { threadId: true, turnId: true, direction: true },
  });
  if (!customer?.threadId || customer.direction !== 'inbound') return null;
  const reply = await db.message.findUnique({
    where: { mailboxId_messageId: { mailboxId, messageId: replyMessageId } },
    select: { extractedText: true },
  });
  const turn = customer.turnId ? await db.turn.findUnique({ where: { id: customer.turnId }, include: { draft: true } }) : null;
  const thread = await db.thread.findUniqueOrThrow({ where: { id: customer.threadId }, select: { entityId: true } });
  const at = turn?.startedAt ?? new Date();
  const [calls, facts] = await Promise.all([
    turn?.finishedAt
      ? db.llmCall.count({ where: { threadId: customer.threadId, purpose: 'message_turn', createdAt: turn.finishedAt } })
      : Promise.resolve(0),
    db.profileFact.findMany({
      where: { entityId: thread.entityId, createdAt: { lte: at }, OR: [{ retiredAt: null }, { retiredAt: { gt: at } }] },
      select: { value: true },
    }),
  ]);
  return {
    threadId: customer.threadId,
    draft: turn?.draft ? { id: turn.draft.id, body: turn.draft.body, needsHuman: turn.draft.needsHuman } : null,
    turn: turn
      ? {
          prompt: turn.prompt ?? '',
          promptTokens: turn.promptTokens,
          completionTokens: turn.completionTokens,
          modelCalls: calls,
          failed: turn.status === 'failed',
        }
      : null,
    teamReply: reply?.extractedText ?? null,
    profileValues: facts.map((f) => f.value),
  };
}
