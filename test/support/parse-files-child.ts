/**
 * Runs as its own process (see test/unit/parser-process.test.ts): parses every file named on the
 * command line with the product's parser and reports, as one JSON line on stdout, each outcome and
 * how many exceptions reached the process (`uncaughtException`, `unhandledRejection`). A canary
 * exception thrown from an event emitter first proves the counting itself works.
 */
import { EventEmitter } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseRawEmail } from '../../src/mail/parse-message.ts';

const escaped: string[] = [];
process.on('uncaughtException', (error) => escaped.push(`uncaughtException: ${error instanceof Error ? error.message : String(error)}`));
process.on('unhandledRejection', (error) => escaped.push(`unhandledRejection: ${error instanceof Error ? error.message : String(error)}`));

// The canary: a throwing listener called from a timer, the way a parser callback runs.
const canary = new EventEmitter();
canary.on('data', () => {
  throw new Error('canary');
});
await new Promise<void>((resolve) =>
  setTimeout(() => {
    setImmediate(resolve);
    canary.emit('data');
  }, 0),
);
const canaryCaught = escaped.splice(0).length;

const outcomes: Record<string, { ok: boolean; reason: string | null; repairs: string[] }> = {};
for (const file of process.argv.slice(2)) {
  const parsed = await parseRawEmail(await readFile(file));
  outcomes[path.basename(file)] = parsed.ok
    ? { ok: true, reason: null, repairs: parsed.email.repairs }
    : { ok: false, reason: parsed.reason, repairs: [] };
}
// Give stray timers and stream callbacks of the last parse a chance to fire before reporting.
await new Promise((resolve) => setTimeout(resolve, 200));
process.stdout.write(`${JSON.stringify({ canaryCaught, escaped, outcomes })}\n`);
