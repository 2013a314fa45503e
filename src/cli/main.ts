import { CommanderError } from 'commander';
import { describeError, ERROR_CODES, isAppError } from '../errors.ts';
import { buildProgram } from './program.ts';

/** Runs the CLI and returns the process exit code: 0 ok, 1 failure, 2 usage or configuration error. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version arrive here as "errors" with exit code 0.
      return error.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`support-agent: ${describeError(error)}\n`);
    return isAppError(error) ? ERROR_CODES[error.code].exitCode : 1;
  }
}
