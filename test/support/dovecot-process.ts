/**
 * The process side of the Dovecot test harness (test/support/dovecot.ts): a real Dovecot IMAP + LMTP
 * master per instance, in its own temp dir (config, base_dir sockets, state, maildirs, log), on free
 * loopback ports, so several test files can run their own servers at once. The master is started with
 * `dovecot -c <config>` (it daemonizes once its listeners are bound); mail processes run as the `mail`
 * user via a static userdb. Written for Dovecot 2.3 (Debian 12 ships 2.3.19).
 *
 * Cleanup: `destroy()` stops the server and removes the dir. In case the test process dies without calling
 * it, an exit hook stops every live instance, and a detached watchdog shell (one per instance) waits on a
 * pipe from this process: when the pipe closes without being disarmed (even on SIGKILL) it stops Dovecot
 * and removes the temp dir.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A mail account of the test server (login and address are the same). */
export interface DovecotUser {
  user: string;
  password: string;
}

/** Dovecot listens on loopback only. */
export const HOST = '127.0.0.1';
const DOVECOT_BIN = firstExisting(['/usr/sbin/dovecot', '/usr/local/sbin/dovecot']) ?? 'dovecot';
const DOVEADM_BIN = firstExisting(['/usr/bin/doveadm', '/usr/local/bin/doveadm']) ?? 'doveadm';
/** Poll interval and bounded retry counts for waiting on the server. */
const POLL_MS = 50;
const READY_ATTEMPTS = 200; // ~10 s plus connect time
const STOP_ATTEMPTS = 200;
const START_ATTEMPTS_ON_PORT_CLASH = 5;
const COMMAND_TIMEOUT_MS = 20_000;

function firstExisting(paths: string[]): string | undefined {
  return paths.find((p) => existsSync(p));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

function runCommand(file: string, args: string[]): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: COMMAND_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') {
        reject(new Error(`${file} ${args.join(' ')} failed: ${error.message}`));
        return;
      }
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

/** A free loopback port: bind port 0, note the port, release it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not pick a free port'));
      });
    });
  });
}

/** Connect and read the first line; resolves to it, or undefined if the connection fails or says nothing. */
function readGreeting(port: number, timeoutMs = 2_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    let buffer = '';
    let settled = false;
    const socket = net.connect({ host: HOST, port });
    const finish = (line: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(line);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end >= 0) finish(buffer.slice(0, end).trim());
    });
    socket.once('error', () => finish(undefined));
    socket.once('close', () => finish(undefined));
  });
}

function portAcceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: HOST, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Alive and not a zombie (an unreaped daemon that already exited counts as gone). */
function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

/** Live (non-zombie) processes in a process group, found by scanning /proc. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return processAlive(pgid) ? [pgid] : [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      // Fields after "(comm) ": state ppid pgrp ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') members.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return members;
}

/** Signal a process group (the Dovecot master leads its own); ignores an already empty group. */
function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    try {
      process.kill(pgid, signal);
    } catch {
      // already gone
    }
  }
}

function readPidFile(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'latin1').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function lookupMailUser(): Promise<{ uid: number; gid: number }> {
  const passwd = await readFile('/etc/passwd', 'utf8');
  for (const line of passwd.split('\n')) {
    const fields = line.split(':');
    if (fields[0] === 'mail' && fields[2] !== undefined && fields[3] !== undefined) {
      return { uid: Number(fields[2]), gid: Number(fields[3]) };
    }
  }
  throw new Error('Dovecot harness: no `mail` user in /etc/passwd to own the maildirs');
}

function validateUsers(users: DovecotUser[]): void {
  if (users.length === 0) throw new Error('Dovecot harness: at least one user is needed');
  for (const { user, password } of users) {
    if (!/^[^\s:@]+@[^\s:@]+$/.test(user)) throw new Error(`Dovecot harness: bad user name ${JSON.stringify(user)}`);
    if (password.length === 0 || /[:\r\n]/.test(password)) {
      throw new Error(`Dovecot harness: password of ${user} must be non-empty without ':' or newlines`);
    }
  }
}

interface ConfigInput {
  dir: string;
  instanceName: string;
  imapPort: number;
  lmtpPort: number;
  mailUid: number;
  oauth2: boolean;
}

function renderConfig({ dir, instanceName, imapPort, lmtpPort, mailUid, oauth2 }: ConfigInput): string {
  return `# Generated by test/support/dovecot-process.ts for Dovecot 2.3; one instance per temp dir.
instance_name = ${instanceName}
base_dir = ${dir}/run
state_dir = ${dir}/state
protocols = imap lmtp
listen = ${HOST}
log_path = ${dir}/dovecot.log
info_log_path = ${dir}/dovecot.log
debug_log_path = ${dir}/dovecot.log
shutdown_clients = yes

# Plain-text auth over loopback without TLS.
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login${oauth2 ? ' xoauth2 oauthbearer' : ''}
auth_verbose = yes
auth_failure_delay = 0

# Mail processes run as the unprivileged mail user (uid 0 is refused).
first_valid_uid = ${mailUid}
mail_location = maildir:${dir}/mail/%u
postmaster_address = postmaster@acme.example

passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
${
  oauth2
    ? `# XOAUTH2 / OAUTHBEARER: each token is checked at the test's introspection endpoint (oauth2.conf).
passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = ${dir}/oauth2.conf
}
`
    : ''
}userdb {
  driver = static
  args = uid=mail gid=mail home=${dir}/home/%u
}

namespace inbox {
  inbox = yes
  separator = /
  mailbox Drafts {
    special_use = \\Drafts
    auto = subscribe
  }
  mailbox Sent {
    special_use = \\Sent
    auto = subscribe
  }
}

service imap-login {
  inet_listener imap {
    address = ${HOST}
    port = ${imapPort}
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    address = ${HOST}
    port = ${lmtpPort}
  }
}
`;
}

// Live instances, stopped synchronously if the process exits without destroying them.
const liveInstances = new Set<DovecotProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const instance of liveInstances) instance.killSync();
  });
}

// Runs detached with its stdin on a pipe from this process. A `disarm` line means a clean destroy; EOF
// without it means this process died: stop Dovecot's process group (TERM, then KILL) and remove the dir.
const WATCHDOG_SCRIPT = `
if read -r line && [ "$line" = disarm ]; then exit 0; fi
pid=$(cat "$1" 2>/dev/null)
if [ -n "$pid" ]; then
  kill -TERM -"$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
  i=0
  # The master removes its pid file on exit (zombies would keep kill -0 succeeding, so don't poll that).
  while [ -e "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  kill -KILL -"$pid" 2>/dev/null
fi
rm -rf "$2"
`;

/**
 * One Dovecot master process and its temp dir: config, ports, start, stop, restart, destroy, the
 * watchdog, and the `doveadm` commands that act on the server rather than on a mailbox.
 */
export class DovecotProcess {
  readonly host = HOST;
  imapPort = 0;
  lmtpPort = 0;
  readonly users: DovecotUser[];
  readonly dir: string;
  private readonly configPath: string;
  private readonly pidFile: string;
  private readonly logPath: string;
  private readonly instanceName: string;
  private readonly mailUid: number;
  private watchdog: ChildProcess | undefined;
  private destroyed = false;

  private readonly oauth2: boolean;

  constructor(dir: string, users: DovecotUser[], mailUid: number, oauth2 = false) {
    this.oauth2 = oauth2;
    this.dir = dir;
    this.users = users;
    this.mailUid = mailUid;
    this.configPath = path.join(dir, 'dovecot.conf');
    this.pidFile = path.join(dir, 'run', 'master.pid');
    this.logPath = path.join(dir, 'dovecot.log');
    this.instanceName = `dovecot-test-${path.basename(dir)}`;
  }

  /** First start: pick ports, retrying with fresh ones if another process grabbed them in the meantime. */
  async firstStart(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      this.imapPort = await freePort();
      this.lmtpPort = await freePort();
      while (this.lmtpPort === this.imapPort) this.lmtpPort = await freePort();
      const config = renderConfig({
        dir: this.dir,
        instanceName: this.instanceName,
        imapPort: this.imapPort,
        lmtpPort: this.lmtpPort,
        mailUid: this.mailUid,
        oauth2: this.oauth2,
      });
      await writeFile(this.configPath, config, 'utf8');
      const clash = await this.launch();
      if (!clash) break;
      if (attempt >= START_ATTEMPTS_ON_PORT_CLASH) {
        throw await this.failure(`ports stayed busy after ${attempt} attempts`);
      }
    }
    this.armWatchdog();
    await this.waitUntilReady();
  }

  async start(): Promise<void> {
    this.assertNotDestroyed();
    if (this.runningPid() !== undefined) return;
    if (await this.launch()) {
      throw await this.failure(`port ${this.imapPort} or ${this.lmtpPort} is taken by another process`);
    }
    await this.waitUntilReady();
  }

  async stop(): Promise<void> {
    const pid = this.runningPid();
    if (pid === undefined) {
      liveInstances.delete(this);
      return;
    }
    // The master is the leader of its process group. On SIGTERM alone it leaves logged-in imap processes
    // running (they hold their client connections for seconds), so signal the whole group: sessions get
    // "* BYE Server shutting down." and close, the master removes its pid file and exits.
    signalGroup(pid, 'SIGTERM');
    let clean = false;
    for (let i = 0; i < STOP_ATTEMPTS; i++) {
      if (!existsSync(this.pidFile) && groupMembers(pid).length === 0) {
        clean = true;
        break;
      }
      await sleep(POLL_MS);
    }
    if (!clean) signalGroup(pid, 'SIGKILL');
    // The listening sockets must be released before a restart can bind them again.
    for (let i = 0; i < STOP_ATTEMPTS; i++) {
      const released =
        groupMembers(pid).length === 0 && !(await portAcceptsConnections(this.imapPort)) && !(await portAcceptsConnections(this.lmtpPort));
      if (released) {
        liveInstances.delete(this);
        if (!clean) throw await this.failure(`processes of master ${pid} ignored SIGTERM and were killed`);
        return;
      }
      await sleep(POLL_MS);
    }
    throw await this.failure(`processes of master ${pid} or ports ${this.imapPort}/${this.lmtpPort} outlived stop`);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    try {
      await this.stop();
    } finally {
      this.destroyed = true;
      liveInstances.delete(this);
      this.disarmWatchdog();
      await rm(this.dir, { recursive: true, force: true });
    }
  }

  /** Synchronous best-effort stop for the process exit hook. */
  killSync(): void {
    const pid = this.runningPid();
    if (pid !== undefined) signalGroup(pid, 'SIGTERM');
  }

  async dropConnections(user?: string): Promise<void> {
    this.assertNotDestroyed();
    const targets = user !== undefined ? [user] : this.users.map((u) => u.user);
    for (const target of targets) {
      const result = await runCommand(DOVEADM_BIN, ['-c', this.configPath, 'kick', target]);
      // 68 (EX_NOUSER) = nobody to kick.
      if (result.code !== 0 && result.code !== 68) {
        throw await this.failure(`doveadm kick ${target} exited ${result.code}: ${result.stderr || result.stdout}`);
      }
    }
    // kick signals the processes; wait until anvil no longer lists the sessions.
    for (let i = 0; i < READY_ATTEMPTS; i++) {
      const remaining = await this.sessions();
      if (!remaining.some((s) => targets.includes(s.user))) return;
      await sleep(POLL_MS);
    }
    throw await this.failure(`sessions of ${targets.join(', ')} survived doveadm kick`);
  }

  /** Logged-in sessions as anvil knows them (`doveadm who -1`). */
  async sessions(): Promise<Array<{ user: string; protocol: string; pid: number }>> {
    const out = await this.doveadm(['who', '-1']);
    return out
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields.length >= 3 && fields[0] !== '')
      .map((fields) => ({ user: fields[0] ?? '', protocol: fields[1] ?? '', pid: Number(fields[2]) }));
  }

  /** The last lines of the Dovecot log, for error messages. */
  async logTail(lines = 40): Promise<string> {
    try {
      const text = await readFile(this.logPath, 'utf8');
      return text.trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log yet)';
    }
  }

  /** Runs `doveadm` against this instance; a non-zero exit becomes an error carrying the log tail. */
  async doveadm(args: string[]): Promise<string> {
    const result = await runCommand(DOVEADM_BIN, ['-c', this.configPath, ...args]);
    if (result.code !== 0) {
      throw await this.failure(`doveadm ${args.join(' ')} exited ${result.code}: ${result.stderr || result.stdout}`);
    }
    return result.stdout;
  }

  /** Runs the `dovecot` daemon launcher; returns true if it failed only because a port was taken. */
  private async launch(): Promise<boolean> {
    await mkdir(path.join(this.dir, 'run'), { recursive: true });
    const startupLog = path.join(this.dir, 'startup.log');
    // The daemon keeps the launcher's stdio open, so hand it a file rather than a pipe and wait for 'exit'.
    const fd = openSync(startupLog, 'w');
    let code: number | null;
    try {
      code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn(DOVECOT_BIN, ['-c', this.configPath], { stdio: ['ignore', fd, fd] });
        child.once('error', reject);
        child.once('exit', (exitCode) => resolve(exitCode));
      });
    } finally {
      closeSync(fd);
    }
    if (code === 0) {
      liveInstances.add(this);
      installExitHook();
      return false;
    }
    const output = await readFile(startupLog, 'utf8').catch(() => '');
    if (/Address already in use/.test(output)) return true;
    throw await this.failure(`\`dovecot -c ${this.configPath}\` exited ${code}: ${output.trim()}`);
  }

  /** Poll (bounded) until IMAP and LMTP both greet. */
  private async waitUntilReady(): Promise<void> {
    let imap: string | undefined;
    let lmtp: string | undefined;
    for (let i = 0; i < READY_ATTEMPTS; i++) {
      imap ??= (await readGreeting(this.imapPort))?.startsWith('* OK') ? 'ok' : undefined;
      lmtp ??= (await readGreeting(this.lmtpPort))?.startsWith('220') ? 'ok' : undefined;
      if (imap && lmtp) return;
      if (this.runningPid() === undefined) throw await this.failure('the master process exited during startup');
      await sleep(POLL_MS);
    }
    const state = `imap ${imap ?? 'silent'}, lmtp ${lmtp ?? 'silent'}`;
    throw await this.failure(`no greeting after ${READY_ATTEMPTS} attempts (${state})`);
  }

  private runningPid(): number | undefined {
    const pid = readPidFile(this.pidFile);
    return pid !== undefined && processAlive(pid) ? pid : undefined;
  }

  private armWatchdog(): void {
    const child = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'dovecot-test-watchdog', this.pidFile, this.dir], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', () => {
      // best effort only
    });
    child.stdin?.on('error', () => {
      // EPIPE if the watchdog is gone
    });
    child.unref();
    (child.stdin as unknown as net.Socket | null)?.unref();
    this.watchdog = child;
  }

  private disarmWatchdog(): void {
    const stdin = this.watchdog?.stdin;
    if (stdin && !stdin.destroyed) stdin.end('disarm\n');
    this.watchdog = undefined;
  }

  /** Throws once `destroy()` has run: a destroyed instance's ports may belong to someone else. */
  assertNotDestroyed(): void {
    if (this.destroyed) throw new Error(`Dovecot harness at ${this.dir} was destroyed`);
  }

  /** An error naming this instance, with the tail of its log. */
  async failure(message: string): Promise<Error> {
    return new Error(`Dovecot (${this.dir}): ${message}\n--- dovecot.log (tail) ---\n${await this.logTail()}`);
  }
}

function tempRoot(): string {
  // base_dir holds unix sockets, whose paths must stay well under 108 bytes.
  const dir = os.tmpdir();
  return dir.length <= 40 ? dir : '/tmp';
}

/**
 * Prepares a temp dir for these users (maildirs owned by `mail`, a passwd file) and starts Dovecot
 * in it on free loopback ports; resolves once IMAP and LMTP greet. Needs root.
 */
export async function launchDovecot(users: DovecotUser[], options: { oauth2IntrospectionUrl?: string } = {}): Promise<DovecotProcess> {
  if (process.getuid?.() !== 0) {
    throw new Error('Dovecot harness: must run as root (the master switches mail processes to the `mail` user)');
  }
  validateUsers(users);
  const mail = await lookupMailUser();
  const dir = await mkdtemp(path.join(tempRoot(), 'dovecot-'));
  try {
    // Mail processes (uid mail) must traverse the dir; maildirs and homes belong to them.
    await chmod(dir, 0o755);
    for (const sub of ['run', 'state']) await mkdir(path.join(dir, sub), { mode: 0o755 });
    for (const sub of ['mail', 'home']) {
      await mkdir(path.join(dir, sub), { mode: 0o700 });
      await chown(path.join(dir, sub), mail.uid, mail.gid);
    }
    // Read by the auth process, which runs as the `dovecot` user.
    const passwdFile = users.map((u) => `${u.user}:{PLAIN}${u.password}\n`).join('');
    await writeFile(path.join(dir, 'users'), passwdFile, { mode: 0o644 });
    if (options.oauth2IntrospectionUrl) {
      // Dovecot POSTs token=<access token> and expects {"active": true, "username": ...} back.
      const oauth2Conf = [
        `introspection_url = ${options.oauth2IntrospectionUrl}`,
        'introspection_mode = post',
        'username_attribute = username',
        'active_attribute = active',
        'active_value = true',
        '',
      ].join('\n');
      await writeFile(path.join(dir, 'oauth2.conf'), oauth2Conf, { mode: 0o644 });
    }
    const instance = new DovecotProcess(dir, users, mail.uid, Boolean(options.oauth2IntrospectionUrl));
    try {
      await instance.firstStart();
    } catch (error) {
      await instance.destroy().catch(() => undefined);
      throw error;
    }
    return instance;
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
