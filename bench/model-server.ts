/**
 * The scripted model in a process of its own, for the worker phase: `node --import tsx
 * bench/model-server.ts <latencyMs>` prints `{"url": …}` on its first line and serves until its
 * standard input closes. Out of the measured process, the model's own JSON work does not take
 * CPU from the workers it is supposed to be waiting for, so "what the agent adds to a model call"
 * is the agent's alone.
 */
import { startScriptedLlmServer } from '../test/support/scripted-llm-server.ts';
import { realisticTurnModel, withLatency } from './scripted-model.ts';

const latencyMs = Number(process.argv[2] ?? '1000');
const server = await startScriptedLlmServer({ fallback: withLatency(realisticTurnModel(), latencyMs) });
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void server.close().finally(() => process.exit(0)));
process.on('SIGTERM', () => void server.close().finally(() => process.exit(0)));
