/**
 * Text embeddings from any OpenAI-compatible endpoint (`OPENAI_EMBEDDING_MODEL`), through the
 * `openai` SDK's embeddings API: inputs cut to a token cap, sent in batches, retried a bounded
 * number of times on 429/5xx/timeouts (Retry-After honoured, capped), and the answer checked with
 * zod (one finite vector per input, all of one length) before anything uses it.
 */
import type OpenAI from 'openai';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { truncateToTokens } from '../memory/tokens.ts';
import { openAiClient, retryDelayMs, safeMessage } from './openai-provider.ts';

/** What retrieval needs from an embeddings model: one vector per text, in order. */
export interface Embedder {
  readonly model: string;
  embed(texts: readonly string[]): Promise<number[][]>;
}

export interface EmbedderSettings {
  model: string;
  apiKey: string | undefined;
  baseUrl: string | undefined;
  /** Inputs per request. */
  batch: number;
  /** Each input is cut to this many tokens. */
  inputTokens: number;
  timeoutMs: number;
  maxRetries: number;
}

/** Vectors longer than this are refused (the largest public models have 3,072 dimensions). */
const MAX_DIMENSIONS = 8_192;

const responseSchema = z.object({
  data: z
    .array(
      z.object({
        index: z.number().int().min(0),
        embedding: z.array(z.number().refine(Number.isFinite, 'not a finite number')).min(1).max(MAX_DIMENSIONS),
      }),
    )
    .min(1),
});

export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  private readonly client: OpenAI;

  constructor(
    private readonly settings: EmbedderSettings,
    private readonly logger: Logger,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.model = settings.model;
    // Retries are ours (below), bounded, as for the chat model.
    this.client = openAiClient(settings);
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    const out: number[][] = [];
    let dimensions: number | null = null;
    for (let start = 0; start < texts.length; start += this.settings.batch) {
      // An empty input is refused by OpenAI: a lone space stands in for it.
      const input = texts.slice(start, start + this.settings.batch).map((t) => truncateToTokens(t, this.settings.inputTokens) || ' ');
      const vectors = await this.embedBatch(input);
      for (const vector of vectors) {
        dimensions ??= vector.length;
        if (vector.length !== dimensions)
          throw new AppError('LLM_REJECTED', `embeddings: vectors of ${dimensions} and ${vector.length} dimensions in one answer`);
        out.push(vector);
      }
    }
    return out;
  }

  private async embedBatch(input: string[]): Promise<number[][]> {
    for (let attempt = 0; ; attempt++) {
      try {
        // Floats, not the SDK's default base64: not every compatible server speaks base64.
        const response = await this.client.embeddings.create({ model: this.model, input, encoding_format: 'float' });
        const parsed = responseSchema.safeParse(response);
        if (!parsed.success) throw new AppError('LLM_REJECTED', `embeddings: unexpected answer (${parsed.error.issues[0]?.message})`);
        const byIndex = new Map(parsed.data.data.map((d) => [d.index, d.embedding]));
        const vectors = input.map((_, i) => byIndex.get(i));
        if (vectors.some((v) => v === undefined))
          throw new AppError('LLM_REJECTED', `embeddings: ${parsed.data.data.length} vector(s) for ${input.length} input(s)`);
        return vectors as number[][];
      } catch (error) {
        if (error instanceof AppError) throw error;
        const delay = retryDelayMs(error, attempt);
        if (delay === null) throw new AppError('LLM_REJECTED', `embeddings request rejected: ${safeMessage(error)}`, { cause: error });
        if (attempt >= this.settings.maxRetries)
          throw new AppError('LLM_UNAVAILABLE', `embeddings unavailable after ${attempt + 1} attempt(s): ${safeMessage(error)}`, {
            cause: error,
          });
        this.logger.warn('embeddings request failed; retrying', { attempt: attempt + 1, delayMs: delay, error: safeMessage(error) });
        await this.sleep(delay);
      }
    }
  }
}
