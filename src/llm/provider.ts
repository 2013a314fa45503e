/**
 * One interface for every model behind the product: the OpenAI-compatible provider and the
 * offline rule-based one. Each use case is one method with a zod-validated output.
 */
import type { KnowledgePassage } from '../memory/knowledge.ts';
import type { IncomingEmail, ProfileState, ThreadState } from '../memory/types.ts';
import type { MessageTurn, SummaryCompression, ThreadPromotion } from './contracts.ts';

export interface LlmCallRecord {
  purpose: 'message_turn' | 'thread_promotion' | 'summary_compression';
  promptTokens: number;
  completionTokens: number;
  ok: boolean;
}

/**
 * A structured answer, or the model's failure to give a valid one after a repair attempt.
 * Transport failures (timeouts, 5xx after retries) throw `AppError('LLM_UNAVAILABLE')` instead.
 */
export type LlmOutcome<T> = { ok: true; value: T; calls: LlmCallRecord[] } | { ok: false; error: string; calls: LlmCallRecord[] };

export interface PromptText {
  system: string;
  user: string;
}

export interface TurnRequest {
  prompt: PromptText;
  /** The same context as structured values, for providers that do not read prompts. */
  thread: ThreadState;
  profile: ProfileState | null;
  emails: IncomingEmail[];
  supportName: string;
  summaryTokenCap: number;
  /** The knowledge passages the prompt holds, best first (empty when none matched). */
  knowledge?: readonly KnowledgePassage[];
  /** The current turn's images for a vision-capable model (OPENAI_VISION); the offline provider ignores them. */
  images?: TurnImages;
}

/** Images passed to the model as `image_url` parts, and those named only, each with the reason. */
export interface TurnImages {
  images: Array<{ name: string; dataUri: string }>;
  notShown: string[];
}

export interface PromotionRequest {
  prompt: PromptText;
  thread: ThreadState;
  /** The customer messages of this pass: the only text facts may be quoted from. */
  messages: Array<{ messageId: string; date: Date; text: string }>;
  /** The team's replies since the previous pass (the agent's drafts, what staff sent), for new commitments. */
  replies: Array<{ messageId: string; date: Date; text: string; author: 'agent' | 'staff' }>;
  /** Open commitments, by the id an update must name. */
  commitments: Array<{ id: string; text: string; dueAt: Date | null; overdue: boolean }>;
}

export interface CompressionRequest {
  prompt: PromptText;
  summary: string;
  capTokens: number;
  pinned: string[];
}

export interface LlmProvider {
  readonly name: 'openai' | 'offline';
  readonly model: string;
  messageTurn(request: TurnRequest): Promise<LlmOutcome<MessageTurn>>;
  threadPromotion(request: PromotionRequest): Promise<LlmOutcome<ThreadPromotion>>;
  /** A shorter rewrite of a summary over its cap, keeping the pinned items and open items. */
  compressSummary(request: CompressionRequest): Promise<LlmOutcome<SummaryCompression>>;
}
