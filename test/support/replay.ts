/**
 * Runs the real replay in-process (no CLI start-up) with the offline provider or a given one.
 */
import { loadConfig, type Config } from '../../src/config.ts';
import type { LlmProvider } from '../../src/llm/provider.ts';
import { silentLogger } from '../../src/logger.ts';
import type { ReplayReport } from '../../src/replay/replay-report.ts';
import { runReplay } from '../../src/replay/run-replay.ts';
import type { Database } from '../../src/store/database.ts';

export async function replayFiles(
  inputs: string[],
  options: {
    address?: string;
    env?: Record<string, string>;
    provider?: LlmProvider;
    config?: Config;
    inspect?: (db: Database) => Promise<void>;
  } = {},
): Promise<ReplayReport> {
  return runReplay({
    inputs,
    address: options.address ?? 'support@acme.example',
    config: options.config ?? loadConfig(options.env ?? {}),
    logger: silentLogger,
    ...(options.provider ? { provider: options.provider } : {}),
    ...(options.inspect ? { inspect: options.inspect } : {}),
  });
}
