/**
 * The `support-agent` command line. Each action only parses its arguments and calls a command
 * module; the work lives in src/.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { runMigrate } from './commands/migrate.ts';
import { runReplayCommand } from './commands/replay.ts';

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new InvalidArgumentError('must be a port number (1-65535)');
  return port;
}

export function buildProgram(): Command {
  const program = new Command('support-agent')
    .description('Email support agent: drafts replies with an LLM and remembers each customer')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      // Errors stay one line; help goes to stdout.
      outputError: (text, write) => write(`support-agent: ${text.replace(/^error: /, '').trim()}\n`),
    });

  program
    .command('migrate')
    .description('create or upgrade the database (embedded PGlite in DATA_DIR, or DATABASE_URL)')
    .action(runMigrate);

  program
    .command('replay')
    .description('replay .eml files or folders through the whole pipeline in-process (embedded database, no Redis)')
    .argument('<paths...>', '.eml files or folders (searched recursively)')
    .option('--report <file>', 'write the JSON report here instead of stdout')
    .option('--address <address>', "the support mailbox's own address (default: SUPPORT_ADDRESS)")
    .action(runReplayCommand);

  return program;
}

export { Option, parsePort };
