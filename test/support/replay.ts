/**
 * Runs the real replay in-process (no CLI start-up) with the offline provider or a given one.
 */
import { ingestSettings } from '../../src/app/ingest-settings.ts';
import { loadPolicyFile } from '../../src/app/policy-file.ts';
import { createReplayStages } from '../../src/app/replay-pipeline.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { runReplay } from '../../src/ingest/replay.ts';
import type { ReplayReport } from '../../src/ingest/replay-report.ts';
import { createProvider } from '../../src/llm/create-provider.ts';
import type { LlmProvider } from '../../src/llm/provider.ts';
import { silentLogger } from '../../src/logger.ts';
import type { Database } from '../../src/store/database.ts';

export async function replayFiles(
  inputs: string[],
  options: { address?: string; env?: Record<string, string>; provider?: LlmProvider; config?: Config; inspect?: (db: Database) => Promise<void> } = {},
): Promise<ReplayReport> {
  const config = options.config ?? loadConfig(options.env ?? {});
  const address = options.address ?? 'support@acme.example';
  const policy = await loadPolicyFile(config.memory.policyFile);
  const provider = options.provider ?? createProvider(config.llm, silentLogger);
  return runReplay({
    inputs,
    address,
    logger: silentLogger,
    settings: (db) => ingestSettings(config, db.prisma, address),
    stages: (context) => createReplayStages(context, config, provider, policy),
    ...(options.inspect ? { inspect: options.inspect } : {}),
  });
}
