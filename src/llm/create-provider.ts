import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { OfflineProvider } from './offline-provider.ts';
import { OpenAiProvider } from './openai-provider.ts';
import type { LlmProvider } from './provider.ts';

/** The configured provider: OpenAI-compatible when a key (or a local base URL) is set, else offline rules. */
export function createProvider(llm: Config['llm'], logger: Logger): LlmProvider {
  if (llm.provider === 'offline') return new OfflineProvider();
  return new OpenAiProvider(
    { apiKey: llm.apiKey, baseUrl: llm.baseUrl, model: llm.model, timeoutMs: llm.timeoutMs, maxRetries: llm.maxRetries },
    logger.child('llm'),
  );
}
