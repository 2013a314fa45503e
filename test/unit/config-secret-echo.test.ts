/**
 * A configuration error never shows a configured secret: the mailboxes file's syntax errors say
 * where (line, column) and what kind, never the line (the YAML and JSON parsers' own messages
 * quote it); validation errors name the key; the environment's errors name the variable.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { isAppError } from '../../src/errors.ts';

const SECRET = 'Hunter2-Zq8VpLm3';
const dir = mkdtempSync(path.join(tmpdir(), 'config-secret-'));
let files = 0;

function problem(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (isAppError(error, 'CONFIG_INVALID')) return error.message;
    throw error;
  }
  throw new Error('expected the configuration to be rejected');
}

function fileProblem(text: string, ext: 'yaml' | 'json'): string {
  const file = path.join(dir, `mailboxes-${++files}.${ext}`);
  writeFileSync(file, text);
  return problem({ MAILBOXES_FILE: file });
}

/** No eight characters of the secret in a row. */
function expectNoSecret(message: string): void {
  for (let i = 0; i + 8 <= SECRET.length; i++) expect(message).not.toContain(SECRET.slice(i, i + 8));
  expect(message).not.toContain('\n');
}

const box = (imap: string) => `mailboxes:\n  - address: a@x.example\n${imap}`;

describe('YAML mailboxes file errors never quote the line', () => {
  it.each([
    [
      'an unclosed flow map with the password',
      box(`    imap: { host: h, password: ${SECRET}\n`),
      /line 4, column 1: .*BAD_INDENT|line \d+, column \d+/,
    ],
    [
      'a bad escape inside the quoted password',
      box(`    imap:\n      host: h\n      password: "${SECRET}\\q"\n`),
      /line 5, column \d+: .*BAD_DQ_ESCAPE/,
    ],
    ['a colon inside the unquoted password', box(`    imap:\n      host: h\n      password: ${SECRET}: x\n`), /line 5, column \d+: /],
    ['a tab as indentation before the password', box(`    imap:\n\tpassword: ${SECRET}\n`), /line \d+, column \d+: /],
    [
      'the password key given twice',
      box(`    imap:\n      password: ${SECRET}\n      password: ${SECRET}\n      host: h\n`),
      /line 5, column \d+: .*DUPLICATE_KEY/,
    ],
    [
      'an unknown tag on the password (a warning)',
      box(`    imap:\n      host: h\n      password: !!secret ${SECRET}\n`),
      /line 5, column \d+: .*TAG_RESOLVE_FAILED/,
    ],
    [
      'an unknown directive naming the secret (a warning)',
      `%SECRET ${SECRET}\n---\n${box('    imap: { host: h, password: p }\n')}`,
      /line 1, column 1: .*BAD_DIRECTIVE/,
    ],
    ['an alias named like the secret', box(`    imap:\n      host: h\n      password: *${SECRET}\n`), /not valid YAML: /],
    [
      'a multi-line implicit key holding the secret',
      box(`    imap:\n      host: h\n      "${SECRET}\n      x": 1\n`),
      /line \d+, column \d+: /,
    ],
    [
      'a second document after the password',
      `${box(`    imap: { host: h, password: ${SECRET} }\n`)}---\nx: 1\n`,
      /not valid YAML: |the file/,
    ],
    [
      'an unknown key next to the password',
      box(`    imap: { host: h, password: ${SECRET}, bogus: 1 }\n`),
      /\.imap: Unrecognized key: "bogus"/,
    ],
    ['a password given as a list', box(`    imap: { host: h, password: [${SECRET}] }\n`), /\.imap\.password: /],
    ['a password given as a map', box(`    imap: { host: h, password: { ${SECRET}: 1 } }\n`), /\.imap\.password: /],
    ['a bad port next to the password', box(`    imap: { host: h, port: ${SECRET}, password: ${SECRET} }\n`), /\.imap\.port: /],
    [
      'a bad language set to the secret',
      box(`    imap: { host: h, password: p }\n    language: ${SECRET}\n`),
      /\.language: must be a language tag/,
    ],
    ['a bad reply mode set to the secret', box(`    imap: { host: h, password: p }\n    replyMode: ${SECRET}\n`), /\.replyMode: /],
    [
      'a bad poll interval set to the secret',
      box(`    imap: { host: h, password: p, pollInterval: ${SECRET} }\n`),
      /imap\.pollInterval: not a duration/,
    ],
    [
      'a bad token URL holding the secret',
      box(`    oauth2: { clientId: c, refreshToken: r, tokenUrl: "ftp://u:${SECRET}@x" }\n    imap: { host: h }\n`),
      /oauth2\.tokenUrl: /,
    ],
    [
      'a bad address that is the secret',
      `mailboxes:\n  - address: ${SECRET}\n    imap: { host: h, password: p }\n`,
      /\.address: must be an email address/,
    ],
  ])('%s', (_name, text, expected) => {
    const message = fileProblem(text, 'yaml');
    expect(message).toMatch(/^MAILBOXES_FILE \(mailboxes-\d+\.yaml\): /);
    expect(message).toMatch(expected);
    expectNoSecret(message);
  });
});

describe('JSON mailboxes file errors never quote the line', () => {
  const json = (imap: string) => `{"mailboxes": [{"address": "a@x.example", "imap": {${imap}}}]}`;
  it.each([
    ['an unquoted password', json(`"host": "h", "password": ${SECRET}`), /not valid JSON: /],
    [
      'a missing comma after the password',
      json(`"host": "h", "password": "${SECRET}" "port": 993`),
      /line 1, column \d+: expected ',' or '}'/,
    ],
    [
      'a doubled comma after a token',
      `{"mailboxes": [{"address": "a@x.example", "oauth2": {"clientId": "c", "refreshToken": "${SECRET}",, "x": 1}}]}`,
      /not valid JSON: line 1, column \d+: /,
    ],
    ['a control character inside the password', json(`"host": "h", "password": "${SECRET}\t"`), /a control character inside a string/],
    ['a bad escape inside the password', json(`"host": "h", "password": "${SECRET}\\q"`), /a bad escape in a string/],
    [
      'the file ending inside the password',
      json(`"host": "h", "password": "${SECRET}`).slice(0, -4),
      /line 1, column \d+: (a string is not closed|the file ends too early)/,
    ],
    ['a trailing comma after the password', json(`"host": "h", "password": "${SECRET}",`), /not valid JSON: line 1, column \d+: /],
    ['a single-quoted password', json(`"host": "h", "password": '${SECRET}'`), /not valid JSON: /],
    [
      'the password on its own line after a bad line',
      `{\n "mailboxes": [\n  {"address": "a@x.example",\n   "imap": {"host": "h" "password": "${SECRET}"}}]}`,
      /line 4, column \d+: /,
    ],
    ['a password as a number', json(`"host": "h", "password": 12345678901234`), /\.imap\.password: /],
    ['an unknown key next to the password', json(`"host": "h", "password": "${SECRET}", "bogus": 1`), /\.imap: Unrecognized key: "bogus"/],
  ])('%s', (_name, text, expected) => {
    const message = fileProblem(text, 'json');
    expect(message).toMatch(/^MAILBOXES_FILE \(mailboxes-\d+\.json\): /);
    expect(message).toMatch(expected);
    expectNoSecret(message);
  });
});

describe('environment errors never quote a secret', () => {
  it.each([
    ['a bad SMTP port beside the passwords', { IMAP_PASSWORD: SECRET, SMTP_PASSWORD: SECRET, SMTP_PORT: 'x' }, /SMTP_PORT/],
    [
      'a bad database URL holding the password',
      { DATABASE_URL: `mysql://u:${SECRET}@h/db` },
      /DATABASE_URL: must be a postgresql:\/\/ URL/,
    ],
    ['a bad Redis URL holding the password', { REDIS_URL: `http://:${SECRET}@h` }, /REDIS_URL: must be a redis:\/\/ URL/],
    [
      'a bad OAuth2 token URL holding the secret',
      { OAUTH2_TOKEN_URL: `ftp://u:${SECRET}@h/token`, OAUTH2_CLIENT_SECRET: SECRET },
      /OAUTH2_TOKEN_URL/,
    ],
    ['a short message-id secret', { MESSAGE_ID_SECRET: SECRET.slice(0, 10) + '-' }, /MESSAGE_ID_SECRET: must be at least 16 characters/],
    [
      'oauth2 without a refresh token, with a client secret',
      { MAIL_AUTH: 'oauth2', OAUTH2_CLIENT_SECRET: SECRET, IMAP_HOST: 'h', IMAP_USER: 'u' },
      /required when MAIL_AUTH=oauth2/,
    ],
    ['a bad provider beside the API key', { LLM_PROVIDER: 'x', OPENAI_API_KEY: SECRET }, /LLM_PROVIDER/],
    ['a secret pasted into a duration', { IMAP_POLL_INTERVAL: SECRET }, /IMAP_POLL_INTERVAL/],
  ])('%s', (_name, env, expected) => {
    const message = problem(env);
    expect(message).toMatch(expected);
    expectNoSecret(message);
  });
});
