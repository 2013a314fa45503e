import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { isAppError } from '../../src/errors.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'mailboxes-file-'));
let files = 0;

function fileWith(text: string, ext = 'yaml'): string {
  const file = path.join(dir, `mailboxes-${++files}.${ext}`);
  writeFileSync(file, text);
  return file;
}

function load(text: string, env: Record<string, string> = {}, ext = 'yaml') {
  return loadConfig({ MAILBOXES_FILE: fileWith(text, ext), ...env });
}

function problem(text: string, env: Record<string, string> = {}, ext = 'yaml'): string {
  try {
    load(text, env, ext);
  } catch (error) {
    if (isAppError(error, 'CONFIG_INVALID')) return error.message;
    throw error;
  }
  throw new Error('expected the mailboxes file to be rejected');
}

const TWO = `
mailboxes:
  - address: Support@Acme.example
    name: Acme Support
    imap: { host: imap.acme.example, password: "env:SUPPORT_IMAP_PASSWORD" }
    smtp: { host: smtp.acme.example, port: 465, secure: true, password: "env:SUPPORT_SMTP_PASSWORD" }
    replyMode: send
    signature: |
      Acme Support
      https://acme.example/help
    language: en
  - address: billing@acme.example
    name: Acme Billing
    auth: oauth2
    oauth2:
      provider: microsoft
      clientId: 0000-client
      refreshToken: env:BILLING_REFRESH_TOKEN
    imap: { host: outlook.office365.com, user: billing@acme.example }
    folders: { inbox: [INBOX, Invoices], sent: Sent Items, drafts: Drafts, processed: flag }
    entityKey: domain
    language: de
`;
const SECRETS = { SUPPORT_IMAP_PASSWORD: 'imap-secret-1', SUPPORT_SMTP_PASSWORD: 'smtp-secret-1', BILLING_REFRESH_TOKEN: 'refresh-2' };

describe('the mailboxes file', () => {
  it('reads two mailboxes from YAML, with env: secrets, defaults from the variables, the first one primary', () => {
    const config = load(TWO, { ...SECRETS, IMAP_POLL_INTERVAL: '10s', REPLY_MODE: 'draft' });
    expect(config.mailboxes.map((m) => m.address)).toEqual(['support@acme.example', 'billing@acme.example']);
    expect(config.supportAddress).toBe('support@acme.example');
    expect(config.supportName).toBe('Acme Support');
    const [support, billing] = config.mailboxes;
    expect(support!.imap).toMatchObject({
      host: 'imap.acme.example',
      port: 993,
      secure: true,
      user: 'support@acme.example',
      password: 'imap-secret-1',
    });
    expect(support!.imap.pollIntervalMs).toBe(10_000);
    expect(support!.smtp).toMatchObject({
      host: 'smtp.acme.example',
      port: 465,
      secure: true,
      user: 'support@acme.example',
      password: 'smtp-secret-1',
    });
    expect(support!.replyMode).toBe('send');
    expect(support!.signature).toBe('Acme Support\nhttps://acme.example/help');
    expect(support!.oauth2).toBeNull();
    expect(billing!.oauth2).toEqual({
      tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      clientId: '0000-client',
      clientSecret: undefined,
      refreshToken: 'refresh-2',
      scope: undefined,
    });
    expect(billing!.imap.password).toBeUndefined();
    expect(billing!.imap).toMatchObject({
      folders: ['INBOX', 'Invoices'],
      sentFolder: 'Sent Items',
      draftsFolder: 'Drafts',
      processedAction: 'flag',
    });
    expect(billing!.replyMode).toBe('draft');
    expect(billing!.entityKey).toBe('domain');
    expect(billing!.language).toBe('de');
    expect(billing!.signature).toBeUndefined();
  });

  it('reads the same from JSON, and inline secrets', () => {
    const json = JSON.stringify({
      mailboxes: [
        {
          address: 'help@brand.example',
          name: 'Brand',
          imap: { host: 'imap.brand.example', port: 143, secure: false, password: 'inline-pass' },
        },
      ],
    });
    const config = load(json, {}, 'json');
    expect(config.mailboxes).toHaveLength(1);
    expect(config.mailboxes[0]!.imap).toMatchObject({
      port: 143,
      secure: false,
      password: 'inline-pass',
      draftsFolder: 'auto',
      sentFolder: 'auto',
    });
  });

  it('without the file, the variables are a mailbox of one', () => {
    const config = loadConfig({
      SUPPORT_ADDRESS: 'help@solo.example',
      SUPPORT_NAME: 'Solo',
      IMAP_HOST: 'imap.solo.example',
      IMAP_USER: 'help@solo.example',
      IMAP_PASSWORD: 'p',
      REPLY_SIGNATURE: 'Solo team\n\n',
      REPLY_LANGUAGE: 'fr',
    });
    expect(config.mailboxes).toHaveLength(1);
    expect(config.mailboxes[0]).toMatchObject({
      address: 'help@solo.example',
      name: 'Solo',
      signature: 'Solo team',
      language: 'fr',
      replyMode: 'draft',
    });
    expect(config.mailboxes[0]!.imap).toMatchObject({ host: 'imap.solo.example', password: 'p', folders: ['INBOX'] });
  });

  it('a signature given with its own "-- " line, CRLF and trailing blank lines is normalised; a blank one is none', () => {
    const config = load(
      JSON.stringify({
        mailboxes: [
          { address: 'a@x.example', imap: { host: 'h', password: 'p' }, signature: '-- \r\nA team\r\n\r\n' },
          { address: 'b@x.example', imap: { host: 'h', password: 'p' }, signature: ' \n ' },
        ],
      }),
      {},
      'json',
    );
    expect(config.mailboxes.map((m) => m.signature)).toEqual(['A team', undefined]);
  });

  it.each([
    [
      'an unknown key',
      'mailboxes:\n  - address: a@x.example\n    imap: { host: h, password: p }\n    replymode: send\n',
      /mailboxes\[0\] \(a@x\.example\): Unrecognized key: "replymode"/,
    ],
    [
      'an unknown key in imap',
      'mailboxes:\n  - address: a@x.example\n    imap: { host: h, pass: p }\n',
      /mailboxes\[0\] \(a@x\.example\)\.imap: Unrecognized key: "pass"/,
    ],
    ['an unknown top-level key', 'mailbox:\n  - address: a@x.example\n', /the file: Unrecognized key: "mailbox"/],
    ['a file without mailboxes', 'other: 1\n', /the file: Unrecognized key: "other"/],
    ['a null mailboxes', 'mailboxes:\n', /: mailboxes: Invalid input/],
    ['an empty list', 'mailboxes: []\n', /mailboxes: must list at least one mailbox/],
    ['an empty file', '', /the file: /],
    ['a list instead of an object', '- address: a@x.example\n', /the file: /],
    [
      'a duplicate address (case and spaces differ)',
      'mailboxes:\n  - address: a@x.example\n    imap: { host: h, password: p }\n  - address: " A@X.example"\n    imap: { host: h, password: p }\n',
      /mailboxes\[1\] \(a@x\.example\): the address is listed twice/,
    ],
    [
      'missing auth (no password, no oauth2)',
      'mailboxes:\n  - address: a@x.example\n    imap: { host: h }\n',
      /mailboxes\[0\] \(a@x\.example\): imap\.password is required with auth: password/,
    ],
    [
      'auth oauth2 without its block',
      'mailboxes:\n  - address: a@x.example\n    auth: oauth2\n    imap: { host: h }\n',
      /oauth2 \(clientId, refreshToken\) is required with auth: oauth2/,
    ],
    [
      'oauth2 custom without a token URL',
      'mailboxes:\n  - address: a@x.example\n    oauth2: { clientId: c, refreshToken: r }\n    imap: { host: h }\n',
      /oauth2\.tokenUrl is required with provider custom/,
    ],
    [
      'oauth2 without a refresh token',
      'mailboxes:\n  - address: a@x.example\n    oauth2: { provider: google, clientId: c }\n    imap: { host: h }\n',
      /\.oauth2\.refreshToken: /,
    ],
    [
      'password auth with an oauth2 block',
      'mailboxes:\n  - address: a@x.example\n    auth: password\n    oauth2: { provider: google, clientId: c, refreshToken: r }\n    imap: { host: h, password: p }\n',
      /oauth2 is given but auth is password/,
    ],
    [
      'send without smtp',
      'mailboxes:\n  - address: a@x.example\n    imap: { host: h, password: p }\n    replyMode: send\n',
      /smtp is required with replyMode: send/,
    ],
    [
      'a bad reply mode',
      'mailboxes:\n  - address: a@x.example\n    imap: { host: h, password: p }\n    replyMode: auto\n',
      /\.replyMode: Invalid option/,
    ],
    [
      'a bad address (not shown: it may be anything pasted there)',
      'mailboxes:\n  - address: not-an-address\n    imap: { host: h, password: p }\n',
      /mailboxes\[0\]\.address: must be an email address/,
    ],
    ['no imap', 'mailboxes:\n  - address: a@x.example\n', /mailboxes\[0\] \(a@x\.example\)\.imap: is required/],
    ['a port out of range', 'mailboxes:\n  - address: a@x.example\n    imap: { host: h, port: 70000, password: p }\n', /\.imap\.port: /],
    ['a port as a string', 'mailboxes:\n  - address: a@x.example\n    imap: { host: h, port: "993", password: p }\n', /\.imap\.port: /],
    [
      'a bad language',
      'mailboxes:\n  - address: a@x.example\n    imap: { host: h, password: p }\n    language: English (UK)\n',
      /\.language: must be a language tag/,
    ],
    [
      'a bad poll interval',
      'mailboxes:\n  - address: a@x.example\n    imap: { host: h, password: p, pollInterval: soon }\n',
      /imap\.pollInterval: not a duration/,
    ],
    [
      'an empty inbox list',
      'mailboxes:\n  - address: a@x.example\n    imap: { host: h, password: p }\n    folders: { inbox: [] }\n',
      /folders\.inbox: must list at least one folder/,
    ],
    ['bad YAML', 'mailboxes:\n  - address: a@x.example\n   imap: [\n', /not valid YAML: /],
    [
      'a duplicate YAML key',
      'mailboxes:\n  - address: a@x.example\n    address: b@x.example\n    imap: { host: h, password: p }\n',
      /not valid YAML: /,
    ],
  ])('refuses %s with a one-line error', (_what, text, expected) => {
    const message = problem(text);
    expect(message).toMatch(/^MAILBOXES_FILE \(mailboxes-\d+\.yaml\): /);
    expect(message).toMatch(expected);
    expect(message).not.toContain('\n');
  });

  it('refuses bad JSON with a one-line error', () => {
    const message = problem('{"mailboxes": [', {}, 'json');
    expect(message).toMatch(/^MAILBOXES_FILE \(mailboxes-\d+\.json\): not valid JSON: /);
    expect(message).not.toContain('\n');
  });

  it('names a missing env: variable without showing any secret', () => {
    const message = problem(TWO, { SUPPORT_IMAP_PASSWORD: 'imap-secret-1', SUPPORT_SMTP_PASSWORD: 'smtp-secret-1' });
    expect(message).toMatch(
      /mailboxes\[1\] \(billing@acme\.example\): oauth2\.refreshToken: the environment variable BILLING_REFRESH_TOKEN is not set/,
    );
    expect(message).not.toContain('imap-secret-1');
    expect(problem('mailboxes:\n  - address: a@x.example\n    imap: { host: h, password: "env:1BAD" }\n')).toMatch(
      /imap\.password: "env:" must be followed by a variable name/,
    );
  });

  it('never echoes an inline secret in an error', () => {
    const message = problem('mailboxes:\n  - address: a@x.example\n    imap: { host: h, password: hunter2-secret, bogus: 1 }\n');
    expect(message).not.toContain('hunter2-secret');
  });

  it('refuses a missing file and a file above the size cap', () => {
    expect(() => loadConfig({ MAILBOXES_FILE: path.join(dir, 'nope.yaml') })).toThrow(
      /MAILBOXES_FILE \(nope\.yaml\): cannot read the file \(ENOENT\)/,
    );
    const big = fileWith(`# ${'x'.repeat(1024 * 1024 + 10)}\n`);
    expect(() => loadConfig({ MAILBOXES_FILE: big })).toThrow(/larger than 1048576 bytes/);
  });

  it('does not expand a YAML alias bomb', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from({ length: 9 }, (_, i) => {
        const prev = String.fromCharCode(97 + i);
        const next = String.fromCharCode(98 + i);
        return `${next}: &${next} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`;
      }),
    ].join('\n');
    expect(problem(bomb)).toMatch(/not valid YAML: /);
  });
});
