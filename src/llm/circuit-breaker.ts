/**
 * A provider that stops calling an unreachable model: after `failuresToOpen` calls of one kind
 * (turns, promotions) in a row failed
 * with LLM_UNAVAILABLE (every retry already spent), further calls fail at once with the same code.
 * Replay uses it, so a run against a dead endpoint finishes in seconds with every turn handed to
 * a person and recorded, instead of waiting out the retries of every message.
 */
import { AppError, isAppError } from '../errors.ts';
import type { LlmProvider } from './provider.ts';

export function withCircuitBreaker(provider: LlmProvider, failuresToOpen = 3): LlmProvider {
  // One breaker per call kind: an endpoint that fails only promotions keeps answering turns.
  const breaker = () => {
    let failuresInARow = 0;
    return async <T>(call: () => Promise<T>): Promise<T> => {
      if (failuresInARow >= failuresToOpen) {
        throw new AppError('LLM_UNAVAILABLE', `the model was unreachable ${failuresInARow} times in a row; not tried again`);
      }
      try {
        const result = await call();
        failuresInARow = 0;
        return result;
      } catch (error) {
        if (isAppError(error, 'LLM_UNAVAILABLE')) failuresInARow++;
        throw error;
      }
    };
  };
  const turns = breaker();
  const promotions = breaker();
  const compressions = breaker();
  return {
    name: provider.name,
    model: provider.model,
    messageTurn: (request) => turns(() => provider.messageTurn(request)),
    threadPromotion: (request) => promotions(() => provider.threadPromotion(request)),
    compressSummary: (request) => compressions(() => provider.compressSummary(request)),
  };
}
