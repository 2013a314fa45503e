/**
 * The runtime an operator command works on: the running agent's own when it serves the command
 * (src/cli/operator-socket.ts), else one opened on the configured database for this command and
 * closed after it. `existing: 'require'` (the default) refuses an embedded folder that holds no
 * database instead of creating an empty one.
 */
import { createAppLogger } from '../app/logging.ts';
import { openRuntime, type Runtime } from '../app/runtime.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../store/database.ts';
import { servedRuntime } from './output.ts';

export async function withOperatorRuntime<T>(
  work: (runtime: Runtime) => Promise<T>,
  existing: 'create' | 'require' = 'require',
): Promise<T> {
  const served = servedRuntime();
  if (served) return work(served);
  const config = loadConfig();
  const database = await openDatabase({ ...config, existing });
  const runtime = await openRuntime(config, createAppLogger(config.logLevel === 'info' ? { ...config, logLevel: 'warn' } : config), {
    database,
  });
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}
