import { existsSync } from 'node:fs';
import path from 'node:path';
import { CommanderError } from 'commander';
import { describeError, ERROR_CODES, isAppError } from '../errors.ts';
import { output, servedRuntime } from './output.ts';
import { buildProgram } from './program.ts';

/** Runs the CLI and returns the process exit code: 0 ok, 1 failure, 2 usage or configuration error. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram(main);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version arrive here as "errors" with exit code 0.
      return error.exitCode === 0 ? 0 : 2;
    }
    // The embedded database is the running agent's: it runs the command for us.
    if (isAppError(error, 'DB_LOCKED') && servedRuntime() === null) {
      const forwarded = await forwardIfServed(argv);
      if (forwarded !== null) return forwarded;
    }
    output().err(`support-agent: ${describeError(error)}\n`);
    return isAppError(error) ? ERROR_CODES[error.code].exitCode : 1;
  }
}

/** Loaded only here: a command that never meets a locked database pays for none of this. */
async function forwardIfServed(argv: string[]): Promise<number | null> {
  const [{ loadConfig }, { agentServes, isServedCommand }] = await Promise.all([import('../config.ts'), import('./operator-socket.ts')]);
  if (!isServedCommand(argv)) return null;
  const { dataDir } = loadConfig();
  return agentServes(dataDir) ? forwardToAgent(dataDir, argv) : null;
}

async function forwardToAgent(dataDir: string, argv: string[]): Promise<number> {
  const { sendToAgent } = await import('./operator-socket.ts');
  // Files named on the command line (`import crm.csv`) are read by the agent, from its own folder.
  const absolute = argv.map((arg, i) =>
    i > 0 && !arg.startsWith('-') && !path.isAbsolute(arg) && existsSync(arg) ? path.resolve(arg) : arg,
  );
  try {
    const result = await sendToAgent(dataDir, absolute);
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    return result.code;
  } catch (error) {
    process.stderr.write(
      `support-agent: the running agent holds the database in ${dataDir}, and asking it failed: ${describeError(error)}\n`,
    );
    return 1;
  }
}
