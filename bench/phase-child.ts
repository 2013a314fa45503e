/**
 * Entry point of one phase process: `node --import tsx bench/phase-child.ts <phase> <options-json>`.
 * Every phase is listed here, in one place. Started by `runPhase` (bench/phase-process.ts).
 */
import { ChildRuntime, type PhaseContext, type PhaseOptions } from './phase-process.ts';
import type { PhaseResult } from './report.ts';
import { runAttachments } from './phases/attachments.ts';
import { runContextSize } from './phases/context-size.ts';
import { runHostileMail } from './phases/hostile-mail.ts';
import { runInitialSync, runSyncFill } from './phases/initial-sync.ts';
import { runIngestion } from './phases/ingestion.ts';
import { runKnowledge } from './phases/knowledge.ts';
import { runLatency } from './phases/latency.ts';
import { runPromotionCadence } from './phases/promotion-cadence.ts';
import { runScaleOut } from './phases/scale-out.ts';
import { runWorkerThroughput } from './phases/worker-throughput.ts';

const PHASES: Record<string, (ctx: PhaseContext) => Promise<PhaseResult>> = {
  'ingestion-postgresql': (ctx) => runIngestion(ctx, 'postgresql'),
  'ingestion-pglite': (ctx) => runIngestion(ctx, 'pglite'),
  'context-size': runContextSize,
  'worker-throughput': runWorkerThroughput,
  'scale-out': runScaleOut,
  latency: runLatency,
  'initial-sync': runInitialSync,
  'sync-fill': runSyncFill,
  'hostile-mail': runHostileMail,
  knowledge: runKnowledge,
  'promotion-cadence': runPromotionCadence,
  attachments: runAttachments,
};

async function main(): Promise<number> {
  const [name = '', json = '{}'] = process.argv.slice(2);
  const child = new ChildRuntime(name);
  const phase = PHASES[name];
  if (!phase) {
    await child.send({ type: 'error', error: `unknown phase "${name}"; known: ${Object.keys(PHASES).join(', ')}` });
    return 2;
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`[${name}] ${signal}: cleaning up\n`);
    void child.unwind().finally(() => process.exit(130));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  try {
    const result = await phase(child.context(JSON.parse(json) as PhaseOptions));
    await child.unwind();
    await child.send({ type: 'result', result });
    return 0;
  } catch (error) {
    await child.unwind();
    await child.send({ type: 'error', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    return 1;
  }
}

// Exit explicitly: a library may leave a timer or socket behind, and the parent waits for this exit.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
