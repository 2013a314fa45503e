/**
 * The mailboxes checked as a whole: one IMAP folder of one account (host, port, user) is read by
 * one mailbox only, and no mailbox reads another's (or its own) Sent or Drafts folder as its inbox.
 * Through loadConfig, as the agent reads its configuration.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { isAppError } from '../../src/errors.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'mailbox-overlap-'));
let files = 0;

interface Box {
  address: string;
  host?: string;
  port?: number;
  user?: string;
  inbox?: string[];
  sent?: string;
  drafts?: string;
}

function yaml(boxes: Box[]): string {
  const lines = ['mailboxes:'];
  for (const b of boxes) {
    lines.push(`  - address: "${b.address}"`);
    const imap = [`host: "${b.host ?? 'imap.acme.example'}"`, 'password: p'];
    if (b.port) imap.push(`port: ${b.port}`);
    if (b.user) imap.push(`user: "${b.user}"`);
    lines.push(`    imap: { ${imap.join(', ')} }`);
    const folders: string[] = [];
    if (b.inbox) folders.push(`inbox: [${b.inbox.map((f) => `"${f}"`).join(', ')}]`);
    if (b.sent) folders.push(`sent: "${b.sent}"`);
    if (b.drafts) folders.push(`drafts: "${b.drafts}"`);
    if (folders.length > 0) lines.push(`    folders: { ${folders.join(', ')} }`);
  }
  return `${lines.join('\n')}\n`;
}

function load(boxes: Box[]) {
  const file = path.join(dir, `mailboxes-${++files}.yaml`);
  writeFileSync(file, yaml(boxes));
  return loadConfig({ MAILBOXES_FILE: file });
}

function problem(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isAppError(error, 'CONFIG_INVALID')) return error.message;
    throw error;
  }
  throw new Error('expected the configuration to be rejected');
}

const SUPPORT = { address: 'support@acme.example', user: 'support@acme.example' };
const BILLING = { address: 'support+billing@acme.example', user: 'support@acme.example' };

describe('one IMAP folder is served by one mailbox', () => {
  it.each<[string, Box[], RegExp]>([
    [
      'support@ and support+billing@ on the same login and INBOX',
      [SUPPORT, BILLING],
      /mailboxes\[1\] \(support\+billing@acme\.example\) reads the IMAP folder INBOX of user support@acme\.example on imap\.acme\.example:993, which mailboxes\[0\] \(support@acme\.example\) already reads/,
    ],
    ['the host written in another case', [SUPPORT, { ...BILLING, host: 'IMAP.Acme.Example' }], /mailboxes\[1\].*mailboxes\[0\]/],
    ['the login written in another case', [SUPPORT, { ...BILLING, user: 'Support@ACME.example' }], /mailboxes\[1\].*mailboxes\[0\]/],
    ['INBOX written in lower case', [SUPPORT, { ...BILLING, inbox: ['inbox'] }], /folder INBOX/],
    [
      'a shared folder among others',
      [
        { ...SUPPORT, inbox: ['INBOX', 'Invoices'] },
        { ...BILLING, inbox: ['Invoices'] },
      ],
      /folder Invoices/,
    ],
    ['the same port given and defaulted', [{ ...SUPPORT, port: 993 }, BILLING], /mailboxes\[1\].*mailboxes\[0\]/],
    ['a third mailbox repeating the first', [SUPPORT, { address: 'other@acme.example' }, BILLING], /mailboxes\[2\].*mailboxes\[0\]/],
    [
      'one mailbox listing a folder twice',
      [{ ...SUPPORT, inbox: ['INBOX', 'Inbox'] }],
      /mailboxes\[0\] \(support@acme\.example\) lists the IMAP folder INBOX twice/,
    ],
  ])('refuses %s, naming both mailboxes', (_name, boxes, expected) => {
    const message = problem(() => load(boxes));
    expect(message).toMatch(/^MAILBOXES_FILE \(mailboxes-\d+\.yaml\): /);
    expect(message).toMatch(expected);
    expect(message).toContain('answered twice');
  });

  it.each<[string, Box[]]>([
    ['different folders of one login', [SUPPORT, { ...BILLING, inbox: ['Billing'] }]],
    ['different logins on one host', [SUPPORT, { ...BILLING, user: 'billing@acme.example' }]],
    ['one login on different hosts', [SUPPORT, { ...BILLING, host: 'imap2.acme.example' }]],
    ['one login on different ports', [SUPPORT, { ...BILLING, port: 143 }]],
    ['the logins left to their addresses', [{ address: 'support@acme.example' }, { address: 'support+billing@acme.example' }]],
    [
      'folder names that differ only in case (not INBOX)',
      [
        { ...SUPPORT, inbox: ['Billing'] },
        { ...BILLING, inbox: ['billing'] },
      ],
    ],
  ])('accepts %s', (_name, boxes) => {
    expect(load(boxes).mailboxes).toHaveLength(boxes.length);
  });
});

describe('no mailbox reads a Sent or Drafts folder as its inbox', () => {
  it.each<[string, Box[], RegExp]>([
    [
      "another mailbox's Sent folder",
      [
        { ...SUPPORT, sent: 'Sent Items' },
        { ...BILLING, inbox: ['Sent Items'] },
      ],
      /mailboxes\[1\] \(support\+billing@acme\.example\) reads Sent Items as its inbox, but that folder is mailboxes\[0\] \(support@acme\.example\)'s Sent folder/,
    ],
    [
      "another mailbox's Drafts folder",
      [
        { ...SUPPORT, drafts: 'Drafts' },
        { ...BILLING, inbox: ['Drafts'] },
      ],
      /mailboxes\[1\].* reads Drafts as its inbox, but that folder is mailboxes\[0\].*'s Drafts folder: the agent's drafts/,
    ],
    [
      'its own Sent folder',
      [{ ...SUPPORT, inbox: ['INBOX', 'Sent'], sent: 'Sent' }],
      /mailboxes\[0\].* reads Sent as its inbox, but that folder is its own Sent folder/,
    ],
    [
      'its INBOX as its own Sent folder, written in lower case',
      [{ ...SUPPORT, sent: 'inbox' }],
      /mailboxes\[0\].* reads INBOX as its inbox, but that folder is its own Sent folder/,
    ],
  ])('refuses %s', (_name, boxes, expected) => {
    expect(problem(() => load(boxes))).toMatch(expected);
  });

  it.each<[string, Box[]]>([
    [
      "another account's Sent folder of the same name",
      [
        { ...SUPPORT, sent: 'Sent' },
        { ...BILLING, user: 'billing@acme.example', inbox: ['Sent'] },
      ],
    ],
    ['Sent left to its special-use flag', [SUPPORT, { ...BILLING, inbox: ['Sent'] }]],
    [
      'a separate Sent folder',
      [
        { ...SUPPORT, sent: 'Sent' },
        { ...BILLING, inbox: ['Billing'] },
      ],
    ],
  ])('accepts %s', (_name, boxes) => {
    expect(load(boxes).mailboxes).toHaveLength(boxes.length);
  });

  it('the single mailbox of the variables may not read its own Sent folder', () => {
    const env = {
      IMAP_HOST: 'imap.acme.example',
      IMAP_USER: 'support@acme.example',
      IMAP_PASSWORD: 'p',
      IMAP_FOLDERS: 'INBOX,Sent',
      IMAP_SENT_FOLDER: 'Sent',
    };
    expect(problem(() => loadConfig(env))).toMatch(/IMAP_FOLDERS reads Sent as its inbox, but that folder is its own Sent folder/);
    expect(loadConfig({ ...env, IMAP_FOLDERS: 'INBOX' }).mailboxes).toHaveLength(1);
  });
});
