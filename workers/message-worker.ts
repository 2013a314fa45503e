/**
 * Process entry point for a worker process alone, exactly `support-agent work` (for supervisors
 * that start a script per role): `node --import tsx workers/message-worker.ts`. Wiring only.
 */
import { main } from '../src/cli/main.ts';

process.exitCode = await main(['work']);
