// The Dovecot harness against a real server, with imapflow as the client (as the poller will use it).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { ImapFlow } from 'imapflow';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDovecot, type DovecotServer } from '../support/dovecot.ts';

const SUPPORT = 'support@acme.example';
const OTHER = 'other@acme.example';
const PASSWORDS: Record<string, string> = { [SUPPORT]: 'support-pass', [OTHER]: 'other-pass' };

function token(): string {
  return randomBytes(6).toString('hex');
}

function message(id: string, subject: string, body = `Body of ${id}\r\n`): string {
  return [
    'From: Customer <customer@example.net>',
    `To: ${SUPPORT}`,
    `Subject: ${subject}`,
    `Message-ID: <${id}@example.net>`,
    'Date: Mon, 06 Jan 2025 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
  ].join('\r\n');
}

const clients: ImapFlow[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) {
    if (client.usable) await client.logout().catch(() => client.close());
    else client.close();
  }
});

async function connect(server: DovecotServer, user = SUPPORT): Promise<ImapFlow> {
  const client = new ImapFlow({
    host: server.host,
    port: server.imapPort,
    secure: false,
    auth: { user, pass: PASSWORDS[user] ?? '' },
    logger: false,
  });
  client.on('error', () => {
    // a dropped connection may surface as an error as well as 'close'
  });
  clients.push(client);
  await client.connect();
  return client;
}

function closed(client: ImapFlow, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no 'close' within ${timeoutMs} ms`)), timeoutMs);
    client.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function eventually(check: () => boolean, what: string, attempts = 200): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Dovecot test harness', () => {
  let server: DovecotServer;
  beforeAll(async () => {
    server = await startDovecot();
  });
  afterAll(async () => {
    await server?.destroy();
  });

  it('delivers over LMTP into INBOX, as imapflow sees it', async () => {
    const id = token();
    const raw = message(id, `Order ${id} is late`);
    await server.deliver(SUPPORT, raw, `bounce-${id}@example.net`);

    const client = await connect(server);
    await client.mailboxOpen('INBOX', { readOnly: true });
    const found = await client.fetchAll('1:*', { uid: true, envelope: true, source: true });
    const mine = found.filter((m) => m.envelope?.messageId === `<${id}@example.net>`);
    expect(mine).toHaveLength(1);
    const fetched = mine[0]!;
    expect(fetched.envelope?.subject).toBe(`Order ${id} is late`);
    const source = fetched.source!.toString('utf8');
    // LMTP prepends trace headers and otherwise stores the message byte for byte.
    expect(source.endsWith(raw)).toBe(true);
    expect(source).toMatch(new RegExp(`^Return-Path: <bounce-${id}@example\\.net>\\r\\n`));
    expect(source).toContain(`Delivered-To: ${SUPPORT}\r\n`);

    const listed = await server.list(SUPPORT, 'INBOX');
    expect(listed.filter((m) => m.uid === fetched.uid).map((m) => m.raw.toString('utf8'))).toEqual([source]);
    // Only the addressed mailbox gets it, and unknown recipients are refused like a real server would.
    expect((await server.list(OTHER, 'INBOX')).some((m) => m.raw.includes(id))).toBe(false);
    await expect(server.deliver('nobody@acme.example', message(token(), 'lost'))).rejects.toThrow(/nobody@acme\.example/);
  });

  it('appends to a new folder and returns the UIDs the server assigned, with flags', async () => {
    const folder = `Archive/${token()}`;
    const first = await server.append(SUPPORT, folder, message(token(), 'first'), ['\\Seen']);
    const second = await server.append(SUPPORT, folder, message(token(), 'second'));
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first);

    const client = await connect(server);
    await client.mailboxOpen(folder, { readOnly: true });
    const fetched = await client.fetchAll('1:*', { uid: true, flags: true, envelope: true });
    expect(fetched.map((m) => [m.uid, m.envelope?.subject, m.flags?.has('\\Seen')])).toEqual([
      [first, 'first', true],
      [second, 'second', false],
    ]);
    expect((await server.list(SUPPORT, folder)).map((m) => [m.uid, m.flags])).toEqual([
      [first, ['\\Seen']],
      [second, []],
    ]);
    // Appending to an existing folder works too.
    expect(await server.append(SUPPORT, folder, message(token(), 'third'))).toBe(second + 1);
  });

  it('has a subscribed Drafts folder carrying the \\Drafts special-use flag from the server', async () => {
    const client = await connect(server, OTHER);
    const drafts = (await client.list()).find((m) => m.path === 'Drafts');
    expect(drafts).toBeDefined();
    expect(drafts?.specialUse).toBe('\\Drafts');
    expect(drafts?.specialUseSource).toBe('extension');
    expect(drafts?.flags.has('\\Drafts')).toBe(true);
    expect(drafts?.subscribed).toBe(true);
  });

  it('changes UIDVALIDITY while keeping the messages, renumbered by default', async () => {
    const folder = `Rebuild-${token()}`;
    const raws = [message(token(), 'one'), message(token(), 'two'), message(token(), 'three')];
    const oldUids = [
      await server.append(SUPPORT, folder, raws[0]!, ['\\Seen']),
      await server.append(SUPPORT, folder, raws[1]!),
      await server.append(SUPPORT, folder, raws[2]!, ['\\Flagged']),
    ];
    const client = await connect(server);
    const before = (await client.status(folder, { uidValidity: true })) || undefined;
    expect(before?.uidValidity).toBe(await server.uidValidity(SUPPORT, folder));

    const changed = await server.changeUidValidity(SUPPORT, folder);
    expect(changed).not.toBe(before?.uidValidity);
    const after = (await client.status(folder, { uidValidity: true, messages: true })) || undefined;
    expect(after?.uidValidity).toBe(changed);
    expect(after?.messages).toBe(3);

    const listed = await server.list(SUPPORT, folder);
    expect(listed.map((m) => m.raw.toString('utf8'))).toEqual(raws);
    expect(listed.map((m) => m.flags)).toEqual([['\\Seen'], [], ['\\Flagged']]);
    for (const { uid } of listed) expect(oldUids).not.toContain(uid);

    // keepUids: only the UIDVALIDITY moves.
    const uidsNow = listed.map((m) => m.uid);
    const again = await server.changeUidValidity(SUPPORT, folder, { keepUids: true });
    expect(again).not.toBe(changed);
    expect(await server.uidValidity(SUPPORT, folder)).toBe(again);
    expect((await server.list(SUPPORT, folder)).map((m) => m.uid)).toEqual(uidsNow);
  });

  it('drops the IMAP sessions of one user, then of everyone, and stays up', async () => {
    const support = await connect(server, SUPPORT);
    await support.mailboxOpen('INBOX');
    const other = await connect(server, OTHER);
    await other.mailboxOpen('INBOX');
    const supportClosed = closed(support);

    await server.dropConnections(SUPPORT);
    await supportClosed;
    expect(support.usable).toBe(false);
    await other.noop();
    expect(other.usable).toBe(true);

    const otherClosed = closed(other);
    await server.dropConnections();
    await otherClosed;
    expect(other.usable).toBe(false);

    const fresh = await connect(server, SUPPORT);
    expect((await fresh.status('INBOX', { messages: true })) || undefined).toBeDefined();
  });
});

describe('Dovecot lifecycle', () => {
  it('keeps mail and ports across stop/start and restart', async () => {
    const server = await startDovecot();
    try {
      const { imapPort, lmtpPort } = server;
      const id = token();
      await server.deliver(SUPPORT, message(id, 'survives restarts'));
      const [stored] = await server.list(SUPPORT, 'INBOX');
      const validity = await server.uidValidity(SUPPORT, 'INBOX');
      const client = await connect(server);
      const clientClosed = closed(client);

      await server.stop();
      await clientClosed;
      expect(await refusesConnections(imapPort)).toBe(true);
      expect(await refusesConnections(lmtpPort)).toBe(true);
      await expect(connect(server)).rejects.toThrow();

      await server.start();
      expect([server.imapPort, server.lmtpPort]).toEqual([imapPort, lmtpPort]);
      expect(await server.list(SUPPORT, 'INBOX')).toEqual([stored]);
      expect(await server.uidValidity(SUPPORT, 'INBOX')).toBe(validity);

      await server.restart();
      expect([server.imapPort, server.lmtpPort]).toEqual([imapPort, lmtpPort]);
      await server.deliver(SUPPORT, message(token(), 'after restart'));
      const listed = await server.list(SUPPORT, 'INBOX');
      expect(listed.map((m) => m.uid)).toEqual([stored!.uid, stored!.uid + 1]);
      expect(listed[0]!.raw.toString('utf8')).toContain(id);
    } finally {
      await server.destroy();
    }
  });

  it('runs independent instances side by side and destroy removes process and dir', async () => {
    const [a, b] = await Promise.all([startDovecot(), startDovecot({ users: [{ user: 'solo@acme.example', password: 'solo-pass' }] })]);
    const pidA = Number(readFileSync(`${a.dir}/run/master.pid`, 'utf8'));
    const pidB = Number(readFileSync(`${b.dir}/run/master.pid`, 'utf8'));
    try {
      expect(new Set([a.imapPort, a.lmtpPort, b.imapPort, b.lmtpPort]).size).toBe(4);
      expect(a.dir).not.toBe(b.dir);
      expect(b.users.map((u) => u.user)).toEqual(['solo@acme.example']);
      await a.deliver(SUPPORT, message(token(), 'only in a'));
      await expect(b.deliver(SUPPORT, message(token(), 'not a user of b'))).rejects.toThrow();
      expect(await b.append('solo@acme.example', 'INBOX', message(token(), 'b'))).toBe(1);
    } finally {
      await a.destroy();
    }
    expect(processGone(pidA)).toBe(true);
    expect(existsSync(a.dir)).toBe(false);
    expect(await refusesConnections(a.imapPort)).toBe(true);
    expect(processGone(pidB)).toBe(false);
    await b.destroy();
    expect(processGone(pidB)).toBe(true);
    expect(existsSync(b.dir)).toBe(false);
  });

  it('stops Dovecot and removes its dir when the owning process is killed', async () => {
    const script = [
      `import { readFileSync } from 'node:fs';`,
      `import { startDovecot } from ${JSON.stringify(new URL('../support/dovecot.ts', import.meta.url).pathname)};`,
      `const server = await startDovecot();`,
      `const pid = Number(readFileSync(server.dir + '/run/master.pid', 'utf8'));`,
      `console.log(JSON.stringify({ dir: server.dir, pid, port: server.imapPort }));`,
      `setInterval(() => {}, 1000);`,
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const started = await new Promise<{ dir: string; pid: number; port: number }>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { dir: string; pid: number; port: number });
      });
      child.once('exit', (code) => reject(new Error(`child exited ${code} before starting Dovecot: ${stderr}`)));
    });
    expect(processGone(started.pid)).toBe(false);
    expect(await refusesConnections(started.port)).toBe(false);

    child.kill('SIGKILL');
    await eventually(() => processGone(started.pid), `master ${started.pid} to exit`);
    await eventually(() => !existsSync(started.dir), `${started.dir} to be removed`, 400);
    expect(await refusesConnections(started.port)).toBe(true);
  });
});
