/**
 * The `support-agent` command line. Each action only parses its arguments and calls a command
 * module; the work lives in src/.
 */
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { IMPORT_FORMATS } from '../app/import-formats.ts';
import { parseDuration } from '../duration.ts';
import { FACT_CATEGORIES, FACT_KEY_RULE } from '../memory/types.ts';
import { AUTH_FLOWS, AUTH_PROVIDERS } from './commands/auth-choices.ts';
import type { RunCommand, ServeParts } from './commands/serve.ts';
import { output } from './output.ts';

/**
 * An action whose module is loaded only when its command runs, so `--help` and a usage error
 * load none of the product (the database, the queues, the model client).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- commander passes each action its own arguments
function lazy(load: () => Promise<(...args: any[]) => unknown>): (...args: unknown[]) => Promise<void> {
  return async (...args) => {
    const action = await load();
    await action(...args);
  };
}

const admin = () => import('./commands/admin.ts');
const kb = () => import('./commands/kb.ts');

function parseTag(value: string): string {
  if (!/^[a-z0-9][a-z0-9_]{0,59}$/.test(value)) throw new InvalidArgumentError('must be a snake_case tag (billing, p0, feature_request)');
  return value;
}

function parseMailboxAddress(value: string): string {
  const address = value.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) throw new InvalidArgumentError('must be a mailbox address like billing@acme.example');
  return address;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new InvalidArgumentError('must be a port number (1-65535)');
  return port;
}

/** An http(s) URL; plain http only to this machine (a token endpoint elsewhere would see the secret in clear). */
function parseEndpoint(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an https:// URL');
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new InvalidArgumentError('must be an https:// URL (http:// only to 127.0.0.1, localhost or [::1])');
  if (url.username || url.password) throw new InvalidArgumentError('must not carry credentials');
  return url.href;
}

function parseTimeout(value: string): number {
  const ms = parseDuration(value);
  if (ms === null || ms < 1000 || ms > 86_400_000) throw new InvalidArgumentError('must be a duration between 1s and 24h, like 90s or 15m');
  return ms;
}

export function buildProgram(runCommand: RunCommand): Command {
  const program = new Command('support-agent')
    .description('Email support agent: drafts replies with an LLM and remembers each customer')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      // A command the running agent serves writes to its operator, not to the agent's streams.
      writeOut: (text) => output().out(text),
      writeErr: (text) => output().err(text),
      // Errors stay one line; help goes to stdout.
      outputError: (text, write) => write(`support-agent: ${text.replace(/^error: /, '').trim()}\n`),
    });

  const serve = (parts: ServeParts) => lazy(async () => (await import('./commands/serve.ts')).runServe)(parts, runCommand);

  program
    .command('migrate')
    .description('create or upgrade the database (embedded PGlite in DATA_DIR, or DATABASE_URL)')
    .action(lazy(async () => (await import('./commands/migrate.ts')).runMigrate));

  program
    .command('start')
    .description('run everything in one process: poller (if IMAP is configured), workers, console (if CONSOLE_PASSWORD is set)')
    .option('--port <port>', 'console port (default: CONSOLE_PORT or 3000)', parsePort)
    .action((options: { port?: number }) =>
      serve({ poll: 'if-configured', work: true, console: 'if-configured', ...(options.port ? { consolePort: options.port } : {}) }),
    );

  program
    .command('poll')
    .description('run only the IMAP poller (needs IMAP_HOST, IMAP_USER, and IMAP_PASSWORD or MAIL_AUTH=oauth2)')
    .action(() => serve({ poll: true, work: false, console: false }));

  program
    .command('work')
    .description('run only the workers: reply turns, outbox, promotions, reconciler')
    .action(() => serve({ poll: false, work: true, console: false }));

  program
    .command('console')
    .description('run only the review console (CONSOLE_PASSWORD; without it, on loopback, a one-time login link is printed)')
    .option('--port <port>', 'port (default: CONSOLE_PORT or 3000)', parsePort)
    .action((options: { port?: number }) =>
      serve({ poll: false, work: false, console: true, ...(options.port ? { consolePort: options.port } : {}) }),
    );

  program
    .command('replay')
    .description('replay .eml files or folders through the whole pipeline in-process (embedded database, no Redis)')
    .argument('<paths...>', '.eml files or folders (searched recursively)')
    .option('--report <file>', 'write the JSON report here instead of stdout')
    .option('--address <address>', "the support mailbox's own address (default: SUPPORT_ADDRESS)")
    .option('--data-dir <dir>', 'keep the embedded database in this new or empty folder (then DATA_DIR=<dir> support-agent profile ...)')
    .option(
      '--kb <path>',
      'import this knowledge-base folder or file into the replay database first (repeatable)',
      (value: string, all: string[] = []) => [...all, value],
    )
    .option('--no-settle', 'stop at the last mail instead of running the clock on past QUIET_AFTER (due promotions, expiry sweeps)')
    .action(lazy(async () => (await import('./commands/replay.ts')).runReplayCommand));

  program
    .command('eval')
    .description("replay a mailbox's history and score the agent's drafts against the team's real replies")
    .argument('<history>', 'an mbox file, a Maildir, or a folder of .eml files')
    .option('--report <file>', 'write the JSON report here')
    .option('--address <address>', "the support mailbox's own address (default: SUPPORT_ADDRESS)")
    .option('--sent <history>', "the team's Sent folder exported (mbox, Maildir or folder): the team's replies, proven by the channel")
    .option('--compare <file>', 'an earlier report: print the differences')
    .option(
      '--kb <path>',
      'import this knowledge-base folder or file first, as the agent would answer with it (repeatable)',
      (value: string, all: string[] = []) => [...all, value],
    )
    .option('--pairs', "print every scored pair: the agent's draft beside the team's reply, lowest similarity first")
    .option('--html <file>', 'write every scored pair, side by side, to this HTML page')
    .action(lazy(async () => (await import('./commands/eval.ts')).runEvalCommand));

  program
    .command('profile')
    .description("print a customer's profile (seed shape): facts with confidence, source and expiry, past threads, commitments")
    .argument('<customer>', 'an address or an entity id')
    .option('--as-of <date>', 'what the profile held on that date (2026-11-20 = the end of that day, UTC)')
    .action(lazy(async () => (await admin()).runProfile));

  program
    .command('thread')
    .description("print a thread's state, messages and turns")
    .argument('<thread>', 'thread id')
    .action(lazy(async () => (await admin()).runThread));

  program
    .command('threads')
    .description('list the threads carrying a tag, or of a mailbox, newest activity first (the vocabulary is in the policy file)')
    .option('--tag <tag>', 'a snake_case tag, e.g. billing', parseTag)
    .option('--mailbox <address>', "only this mailbox's threads (with several mailboxes)", parseMailboxAddress)
    .option('--status <status>', 'only threads in this status', (value: string) => {
      if (!['open', 'resolved', 'closed'].includes(value)) throw new InvalidArgumentError('must be open, resolved or closed');
      return value;
    })
    .option('--json', 'print JSON')
    .action(lazy(async () => (await admin()).runThreads));

  program
    .command('why')
    .description('show the decision trail behind a profile: message, evidence, rule, time')
    .argument('<customer>', 'an address or an entity id')
    .argument('[key]', 'only decisions about this fact key')
    .option('--as-of <date>', 'only decisions made by then, and what the profile held then')
    .action(lazy(async () => (await admin()).runWhy));

  program
    .command('commitments')
    .description('list what the support side promised and has not done yet, oldest due first')
    .option('--overdue', 'only commitments past their due date')
    .option('--all', 'also the fulfilled and cancelled ones, with what closed them')
    .option('--customer <customer>', "only this customer's (an address or an entity id)")
    .option('--json', 'print JSON')
    .action(lazy(async () => (await admin()).runCommitments));

  program
    .command('stats')
    .description('how good the drafts were: outcomes, approval as is, edit similarity, needs-human rate, time to draft, per intent and tag')
    .option('--since <duration>', 'drafts made in this past period', '30d')
    .option('--json', 'print JSON')
    .action(lazy(async () => (await admin()).runStats));

  program
    .command('promote')
    .description('promote a thread into its customer profile now (an operator checkpoint)')
    .argument('<thread>', 'thread id')
    .action(lazy(async () => (await admin()).runPromote));

  const facts = program.command('facts').description('trusted profile facts');
  facts
    .command('set')
    .description('set a fact as an operator; the only way besides import to set protected keys such as account_tier')
    .argument('<customer>', 'an address or an entity id')
    .argument('<key>', `${FACT_KEY_RULE}, e.g. account_tier`)
    .argument('<value>', 'the value (1-500 characters)')
    .addOption(new Option('--category <category>', 'default: from the policy').choices(FACT_CATEGORIES))
    .action(lazy(async () => (await admin()).runFactsSet));

  program
    .command('import')
    .description('import trusted facts from a CRM export (CSV or JSON keyed by email address)')
    .argument('<file>', '.csv (email,<key>,<key>... or email,key,value[,category]) or .json')
    .addHelpText('after', `\n${IMPORT_FORMATS}`)
    .action(lazy(async () => (await admin()).runImport));

  program
    .command('link')
    .description('attach an address to an existing customer (merging its profile if it had its own)')
    .argument('<address>', 'the address to attach')
    .argument('<customer>', 'an address or an entity id of the customer it belongs to')
    .action(lazy(async () => (await admin()).runLink));

  program
    .command('erase')
    .description("erase everything about a customer and redact its mentions in other customers' data, in PostgreSQL and Redis")
    .argument('<customer>', 'an address or an entity id')
    .option('--yes', 'confirm the erasure')
    .option('--json', 'print what changed as JSON (counts only)')
    .action(lazy(async () => (await admin()).runErase));

  program
    .command('auth')
    .description('obtain an OAuth2 refresh token for the mailbox (MAIL_AUTH=oauth2) and print the settings to use')
    .addArgument(new Argument('<provider>', 'google (browser redirect), microsoft (device code) or custom').choices(AUTH_PROVIDERS))
    .option('--client-id <id>', "your app registration's client id (default: OAUTH2_CLIENT_ID)")
    .option(
      '--client-secret <secret>',
      'its secret, if it has one; Google needs it (default: OAUTH2_CLIENT_SECRET, which keeps it out of ps)',
    )
    .option('--tenant <tenant>', 'microsoft: a tenant id or domain, organizations or consumers (default: common)')
    .addOption(new Option('--flow <flow>', 'device code, or a browser redirect to this machine (default: by provider)').choices(AUTH_FLOWS))
    .option('--scope <scopes>', 'space-separated scopes (default: IMAP and SMTP for google and microsoft)')
    .option('--auth-url <url>', 'authorization endpoint (redirect flow)', parseEndpoint)
    .option('--token-url <url>', 'token endpoint', parseEndpoint)
    .option('--device-url <url>', 'device authorization endpoint (device flow)', parseEndpoint)
    .addOption(
      new Option('--timeout <duration>', 'give up waiting for the sign-in after this long')
        .argParser(parseTimeout)
        .default(15 * 60_000, '15m'),
    )
    .option('--out <file>', 'write the settings to this new file (mode 0600) instead of stdout')
    .addHelpText(
      'after',
      '\nThe settings (with the refresh token) go to stdout once, or to --out; instructions go to stderr.\n' +
        'Examples:\n  support-agent auth microsoft --client-id <application id>\n' +
        '  OAUTH2_CLIENT_ID=... OAUTH2_CLIENT_SECRET=... support-agent auth google --out oauth2.env',
    )
    .action(lazy(async () => (await import('./commands/auth.ts')).runAuth));

  const kbCommand = program.command('kb').description('the knowledge base drafts answer from: help-center articles, policies, manuals');
  kbCommand
    .command('import')
    .description('import Markdown, HTML, text and PDF files (folders searched recursively); unchanged documents are kept')
    .argument('<paths...>', 'files or folders')
    .option('--prune', 'remove documents that are not among these files')
    .option('--lang <code>', 'the language of documents that do not say their own (e.g. en, de)')
    .option('--tag <tag>', 'a tag for every imported document (repeatable)', (value: string, all: string[] = []) => [...all, value])
    .option('--json', 'print the report as JSON')
    .action(lazy(async () => (await kb()).runKbImport));
  kbCommand
    .command('list')
    .description('list the documents')
    .option('--json', 'print JSON')
    .action(lazy(async () => (await kb()).runKbList));
  kbCommand
    .command('show')
    .description('print a document with its passages')
    .argument('<doc>', 'document id or source path')
    .action(lazy(async () => (await kb()).runKbShow));
  kbCommand
    .command('search')
    .description('search the passages as a reply turn would')
    .argument('<query>', 'a question, as a customer would write it')
    .option('--limit <n>', 'how many passages (default 5)')
    .option('--json', 'print JSON')
    .action(lazy(async () => (await kb()).runKbSearch));
  kbCommand
    .command('remove')
    .description('remove documents')
    .argument('<docs...>', 'document ids or source paths')
    .action(lazy(async () => (await kb()).runKbRemove));

  return program;
}
