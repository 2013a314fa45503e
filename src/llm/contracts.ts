/**
 * The structured LLM calls and their output contracts. The JSON schema names are part of the
 * product's interface (`response_format.json_schema.name`).
 */
import { z } from 'zod';
import { FACT_CATEGORIES } from '../memory/types.ts';

export const MESSAGE_TURN = 'message_turn';
export const THREAD_PROMOTION = 'thread_promotion';
export const SUMMARY_COMPRESSION = 'summary_compression';

/** One claim of a reply and the source that supports it (checked by src/memory/grounding.ts). */
const citationSchema = z.object({
  /** The reply's sentence that states the fact, step, number, date or policy. */
  sentence: z.string(),
  /** `kb:<passage id>`, `profile:<fact key>` or `message:<Message-ID>`. */
  source: z.string(),
  /** The exact words of the source that support the sentence. */
  quote: z.string(),
});

export const messageTurnSchema = z.object({
  reply: z.object({ body: z.string(), needsHuman: z.boolean() }),
  summary: z.string(),
  openItems: z.array(z.string()),
  currentIntent: z.string(),
  tags: z.array(z.string()),
  /** Items to add to the thread's pinned list (identifiers, codes, addresses, deadlines), verbatim. */
  pin: z.array(z.string()).default([]),
  /** Pinned items that no longer matter. */
  unpin: z.array(z.string()).default([]),
  resolved: z.boolean(),
  /**
   * Set when the customer stated something durable (a new phone number, a changed preference):
   * a promotion pass is scheduled right after the turn.
   */
  checkpoint: z.object({ reason: z.string() }).nullable().optional(),
  /** What the reply's claims rest on; a model that cites nothing sends `[]` (or leaves it out). */
  citations: z.array(citationSchema).max(50).default([]),
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
  /** A lifetime shorter than the policy's, when the fact is plainly temporary ("48h", "14d"). */
  ttl: z.string().nullable().optional(),
});

const newCommitmentSchema = z.object({
  text: z.string(),
  /** As written ("Friday", "within 3 business days") or a date; the product resolves and checks it. */
  due: z.string().nullable(),
  /** The team's message that made the promise. */
  sourceMessageId: z.string().nullable().optional(),
});

const commitmentUpdateSchema = z.object({
  /** The id shown in the prompt, or the commitment's exact text. */
  commitment: z.string(),
  status: z.enum(['fulfilled', 'cancelled']),
  /** A quote from a message later than the promise that shows it happened (or was called off). */
  evidence: z.string(),
  sourceMessageId: z.string(),
});

export const threadPromotionSchema = z.object({
  topic: z.string(),
  facts: z.array(promotedFactSchema),
  commitments: z.array(newCommitmentSchema),
  commitmentUpdates: z.array(commitmentUpdateSchema).default([]),
});
export type ThreadPromotion = z.infer<typeof threadPromotionSchema>;
export type PromotedFact = z.infer<typeof promotedFactSchema>;

/** The model's shorter rewrite of a thread summary that outgrew its cap (one extra call, only then). */
export const summaryCompressionSchema = z.object({ summary: z.string() });
export type SummaryCompression = z.infer<typeof summaryCompressionSchema>;
