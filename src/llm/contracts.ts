/**
 * The two structured LLM calls and their output contracts. The JSON schema names are part of the
 * product's interface (`response_format.json_schema.name`).
 */
import { z } from 'zod';
import { FACT_CATEGORIES } from '../memory/types.ts';

export const MESSAGE_TURN = 'message_turn';
export const THREAD_PROMOTION = 'thread_promotion';

export const messageTurnSchema = z.object({
  reply: z.object({ body: z.string(), needsHuman: z.boolean() }),
  summary: z.string(),
  openItems: z.array(z.string()),
  currentIntent: z.string(),
  tags: z.array(z.string()),
  resolved: z.boolean(),
});
export type MessageTurn = z.infer<typeof messageTurnSchema>;

const promotedFactSchema = z.object({
  key: z.string(),
  value: z.string(),
  category: z.enum(FACT_CATEGORIES as unknown as [string, ...string[]]),
  confidence: z.number(),
  explicit: z.boolean(),
  evidence: z.string(),
  sourceMessageId: z.string(),
});

export const threadPromotionSchema = z.object({
  topic: z.string(),
  facts: z.array(promotedFactSchema),
  commitments: z.array(z.object({ text: z.string(), due: z.string().nullable() })),
});
export type ThreadPromotion = z.infer<typeof threadPromotionSchema>;
export type PromotedFact = z.infer<typeof promotedFactSchema>;
