import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { OfflineProvider } from './offline-provider.ts';
import { OpenAiProvider } from './openai-provider.ts';
import type { LlmProvider } from './provider.ts';

/** The configured provider: OpenAI-compatible when a key or a base URL is set, else offline rules. */
export function createProvider(llm: Config['llm'], logger: Logger): LlmProvider {
  if (llm.provider === 'offline') return new OfflineProvider();
  return new OpenAiProvider(
    { apiKey: llm.apiKey, baseUrl: llm.baseUrl, model: llm.model, timeoutMs: llm.timeoutMs, maxRetries: llm.maxRetries },
    logger.child('llm'),
  );
}

/**
 * One line naming the model a command drafts with, so nobody mistakes the offline rules for a
 * model: the provider, the model and the endpoint (its origin and path only, never credentials).
 */
export function describeModel(llm: Config['llm']): string {
  if (llm.provider === 'offline') {
    return 'model: the offline rule-based provider (no OPENAI_BASE_URL or OPENAI_API_KEY set; its drafts are templates, not a model)';
  }
  const endpoint = llm.baseUrl ? endpointOf(llm.baseUrl) : 'https://api.openai.com/v1';
  const key = llm.apiKey ? 'with OPENAI_API_KEY' : 'without a key';
  return `model: ${llm.model} at ${endpoint} (OpenAI-compatible, ${key})`;
}

function endpointOf(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.origin}${url.pathname}`.replace(/\/$/, '');
  } catch {
    return '(an invalid OPENAI_BASE_URL)';
  }
}
