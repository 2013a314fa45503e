/**
 * The commands refuse a mailboxes file that serves one IMAP folder twice (support@ and
 * support+billing@ on one login: each mail would get two replies) or reads a Sent folder as an
 * inbox, before they touch a database or a mailbox: exit code 2 and one line naming both mailboxes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';

const LOGIN = 'imap: { host: imap.acme.example, user: support@acme.example, password: "env:SUPPORT_PASSWORD" }';

async function run(argv: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return { code: await main(argv), stderr };
  } finally {
    spy.mockRestore();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('a mailboxes file that overlaps is refused by the commands', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'overlap-cli-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [
      'one login and INBOX for two addresses',
      `mailboxes:\n  - address: support@acme.example\n    ${LOGIN}\n  - address: support+billing@acme.example\n    ${LOGIN}\n`,
      /mailboxes\[1\] \(support\+billing@acme\.example\) reads the IMAP folder INBOX .* which mailboxes\[0\] \(support@acme\.example\) already reads/,
    ],
    [
      "an inbox that is another mailbox's Sent folder",
      `mailboxes:\n  - address: support@acme.example\n    ${LOGIN}\n    folders: { sent: Sent }\n  - address: support+billing@acme.example\n    ${LOGIN}\n    folders: { inbox: [Sent] }\n`,
      /mailboxes\[1\] \(support\+billing@acme\.example\) reads Sent as its inbox, but that folder is mailboxes\[0\] \(support@acme\.example\)'s Sent folder/,
    ],
  ])('migrate refuses %s', async (name, yaml, expected) => {
    const file = path.join(dir, `${name.replace(/\W+/g, '-')}.yaml`);
    await writeFile(file, yaml);
    const dataDir = path.join(dir, `data-${name.length}`);
    const { code, stderr } = await run(['migrate'], { MAILBOXES_FILE: file, DATA_DIR: dataDir, SUPPORT_PASSWORD: 'pw-Secret-77' });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^support-agent: CONFIG_INVALID: MAILBOXES_FILE \(.*\.yaml\): /);
    expect(stderr).toMatch(expected);
    expect(stderr).not.toContain('pw-Secret-77');
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});
