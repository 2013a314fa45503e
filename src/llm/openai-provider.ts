/**
 * The OpenAI-compatible provider: the `openai` SDK against any base URL (OpenAI, Azure, Ollama,
 * vLLM, llama.cpp). Structured output through `response_format` json_schema, validated with zod;
 * one repair attempt for an invalid answer; retries on 429/5xx/timeouts honouring Retry-After.
 */
import OpenAI, { APIConnectionError, APIError } from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import type { ChatCompletion, ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { z } from 'zod';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import {
  MESSAGE_TURN,
  messageTurnSchema,
  SUMMARY_COMPRESSION,
  summaryCompressionSchema,
  THREAD_PROMOTION,
  threadPromotionSchema,
} from './contracts.ts';
import type {
  CompressionRequest,
  LlmCallRecord,
  LlmOutcome,
  LlmProvider,
  PromptText,
  PromotionRequest,
  TurnImages,
  TurnRequest,
} from './provider.ts';
import { maskText } from '../mail/sensitive-values.ts';

export interface OpenAiSettings {
  apiKey: string | undefined;
  baseUrl: string | undefined;
  model: string;
  timeoutMs: number;
  maxRetries: number;
}

/**
 * The user message with the turn's images: the prompt text (and which images are named only, and
 * why), then each image as an `image_url` part, a base64 data URI at low detail.
 */
function userContent(text: string, images: TurnImages): string | ChatCompletionContentPart[] {
  const notes = [
    ...(images.images.length > 0
      ? [`Images the customer attached, shown below in order: ${images.images.map((i) => i.name).join(', ')}.`]
      : []),
    ...(images.notShown.length > 0 ? [`Images not shown (named only): ${images.notShown.join('; ')}.`] : []),
  ];
  if (notes.length === 0) return text;
  return [
    { type: 'text', text: `${text}\n\n${notes.join('\n')}` },
    ...images.images.map((i): ChatCompletionContentPart => ({ type: 'image_url', image_url: { url: i.dataUri, detail: 'low' } })),
  ];
}

const MAX_RETRY_AFTER_MS = 60_000;
const RETRYABLE_STATUS = new Set([408, 409, 429]);

/** The SDK client for an OpenAI-compatible endpoint, with the SDK's own retries off (ours are bounded). */
export function openAiClient(settings: { apiKey?: string | undefined; baseUrl?: string | undefined; timeoutMs: number }): OpenAI {
  return new OpenAI({ apiKey: settings.apiKey ?? 'no-key', baseURL: settings.baseUrl, timeout: settings.timeoutMs, maxRetries: 0 });
}

export class OpenAiProvider implements LlmProvider {
  readonly name = 'openai' as const;
  readonly model: string;
  private readonly client: OpenAI;

  constructor(
    private readonly settings: OpenAiSettings,
    private readonly logger: Logger,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.model = settings.model;
    // Retries are ours (below): the SDK would honour any Retry-After, even an hour.
    this.client = openAiClient(settings);
  }

  messageTurn(request: TurnRequest) {
    return this.structured(MESSAGE_TURN, messageTurnSchema, request.prompt, request.images);
  }

  threadPromotion(request: PromotionRequest) {
    return this.structured(THREAD_PROMOTION, threadPromotionSchema, request.prompt);
  }

  compressSummary(request: CompressionRequest) {
    return this.structured(SUMMARY_COMPRESSION, summaryCompressionSchema, request.prompt);
  }

  private async structured<S extends z.ZodType>(
    name: LlmCallRecord['purpose'],
    schema: S,
    prompt: PromptText,
    images?: TurnImages,
  ): Promise<LlmOutcome<z.infer<S>>> {
    const calls: LlmCallRecord[] = [];
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: prompt.system },
      { role: 'user', content: images ? userContent(prompt.user, images) : prompt.user },
    ];
    const responseFormat = zodResponseFormat(schema, name);
    let lastError = '';
    for (let attempt = 0; attempt < 2; attempt++) {
      const completion = await this.createWithRetries({ model: this.model, messages, response_format: responseFormat });
      const choice = completion.choices[0];
      const content = choice?.message?.content ?? '';
      const checked = checkContract(schema, content, choice?.finish_reason ?? null, choice?.message?.refusal ?? null);
      calls.push({
        purpose: name,
        promptTokens: completion.usage?.prompt_tokens ?? 0,
        completionTokens: completion.usage?.completion_tokens ?? 0,
        ok: checked.ok,
      });
      if (checked.ok) return { ok: true, value: checked.value, calls };
      lastError = checked.error;
      this.logger.warn('invalid structured answer', { schema: name, attempt: attempt + 1, error: checked.error });
      messages.push(
        { role: 'assistant', content: content.slice(0, 20_000) },
        {
          role: 'user',
          content: `That answer is not valid for the ${name} schema: ${checked.error}. Answer again with only the corrected JSON.`,
        },
      );
    }
    return { ok: false, error: lastError, calls };
  }

  private async createWithRetries(body: OpenAI.ChatCompletionCreateParamsNonStreaming): Promise<ChatCompletion> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.client.chat.completions.create(body);
      } catch (error) {
        const delay = retryDelayMs(error, attempt);
        if (delay === null) {
          throw new AppError('LLM_REJECTED', `LLM request rejected: ${safeMessage(error)}`, { cause: error });
        }
        if (attempt >= this.settings.maxRetries) {
          throw new AppError('LLM_UNAVAILABLE', `LLM unavailable after ${attempt + 1} attempt(s): ${safeMessage(error)}`, { cause: error });
        }
        this.logger.warn('LLM request failed; retrying', { attempt: attempt + 1, delayMs: delay, error: safeMessage(error) });
        await this.sleep(delay);
      }
    }
  }
}

/** JSON.parse plus the zod contract; what went wrong, in words the model can act on. */
export function checkContract<S extends z.ZodType>(
  schema: S,
  content: string,
  finishReason: string | null,
  refusal: string | null,
): { ok: true; value: z.infer<S> } | { ok: false; error: string } {
  if (refusal) return { ok: false, error: `the model refused: ${refusal.slice(0, 200)}` };
  if (finishReason === 'length') return { ok: false, error: 'the answer was cut off (finish_reason=length)' };
  let json: unknown;
  try {
    // PostgreSQL text cannot hold NUL; a model can be talked into writing "\u0000".
    json = JSON.parse(content, (_key, value: unknown) => (typeof value === 'string' ? value.replace(/\u0000/g, '') : value));
  } catch (error) {
    return { ok: false, error: `not JSON (${error instanceof Error ? error.message : 'parse error'})` };
  }
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  return { ok: false, error: issues.join('; ') };
}

/** How long to wait before retrying, or null when retrying cannot help (400, 401, 404, ...). */
export function retryDelayMs(error: unknown, attempt: number): number | null {
  const backoff = Math.min(20_000, 500 * 2 ** attempt) + Math.floor(Math.random() * 250);
  if (error instanceof APIConnectionError) return backoff;
  if (error instanceof APIError) {
    const status = error.status ?? 0;
    if (!RETRYABLE_STATUS.has(status) && status < 500) return null;
    const fromHeader = retryAfterMs(error.headers);
    return fromHeader === null ? backoff : Math.min(MAX_RETRY_AFTER_MS, fromHeader);
  }
  return backoff;
}

function retryAfterMs(headers: Headers | undefined): number | null {
  if (!headers) return null;
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : null;
}

/**
 * The error's message with anything shaped like an API key masked, and any sensitive value a
 * provider echoed from a request (src/mail/sensitive-values.ts): it is logged and stored with the turn.
 */
export function safeMessage(error: unknown): string {
  const message = maskText(error instanceof Error ? error.message : String(error));
  return message.replace(/\b(sk|key|api)[-_][A-Za-z0-9_*-]{6,}/gi, '$1-***').slice(0, 300);
}
