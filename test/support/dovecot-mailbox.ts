/**
 * The mailbox side of the Dovecot test harness (test/support/dovecot.ts): what a test does to the mail
 * of a running instance -- deliver over LMTP, append, list and renumber over IMAP, read and force
 * UIDVALIDITY -- through the real protocols (nodemailer's LMTP client, imapflow) and `doveadm`.
 */
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { HOST, type DovecotProcess } from './dovecot-process.ts';

/** Mail operations on one Dovecot instance; every one fails once the instance is destroyed. */
export class DovecotMailboxes {
  constructor(private readonly server: DovecotProcess) {}

  async deliver(user: string, raw: string | Buffer, envelopeFrom = 'sender@example.net'): Promise<void> {
    this.server.assertNotDestroyed();
    const transport = nodemailer.createTransport({
      host: HOST,
      port: this.server.lmtpPort,
      lmtp: true,
      secure: false,
      ignoreTLS: true,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    try {
      const info = await transport.sendMail({ envelope: { from: envelopeFrom, to: [user] }, raw });
      if (info.rejected.length > 0 || info.accepted.length !== 1) {
        throw new Error(`LMTP did not accept ${user}: ${info.response}`);
      }
    } catch (error) {
      throw await this.server.failure(`LMTP delivery to ${user} failed: ${(error as Error).message}`);
    } finally {
      transport.close();
    }
  }

  async append(user: string, folder: string, raw: string | Buffer, flags: string[] = []): Promise<number> {
    return this.withClient(user, async (client) => {
      await this.ensureFolder(client, folder);
      const result = await client.append(folder, raw, flags);
      if (!result || result.uid === undefined) {
        throw new Error(`APPEND to ${folder} for ${user} returned no UID: ${JSON.stringify(result)}`);
      }
      return result.uid;
    });
  }

  async list(user: string, folder: string): Promise<Array<{ uid: number; flags: string[]; raw: Buffer }>> {
    return this.withClient(user, async (client) => {
      const mailbox = await client.mailboxOpen(folder, { readOnly: true });
      if (mailbox.exists === 0) return [];
      const messages = await client.fetchAll('1:*', { uid: true, flags: true, source: true });
      return messages
        .map((m) => {
          if (!m.source) throw new Error(`FETCH of UID ${m.uid} in ${folder} returned no source`);
          // \Recent is per-session noise; leave it out so assertions see stored flags only.
          const flags = [...(m.flags ?? [])].filter((f) => f !== '\\Recent').sort();
          return { uid: m.uid, flags, raw: m.source };
        })
        .sort((a, b) => a.uid - b.uid);
    });
  }

  async uidValidity(user: string, folder: string): Promise<bigint> {
    return this.withClient(user, async (client) => {
      const status = await client.status(folder, { uidValidity: true });
      if (!status || status.uidValidity === undefined) throw new Error(`STATUS ${folder} returned no UIDVALIDITY`);
      return status.uidValidity;
    });
  }

  async changeUidValidity(user: string, folder: string, options: { keepUids?: boolean } = {}): Promise<bigint> {
    const before = await this.serverUidValidity(user, folder);
    if (!options.keepUids) {
      // Renumber: copy every message to a fresh UID in the same folder, then expunge the originals.
      await this.withClient(user, async (client) => {
        const mailbox = await client.mailboxOpen(folder);
        if (mailbox.exists === 0) return;
        const lastOldUid = mailbox.uidNext - 1;
        const copied = await client.messageCopy(`1:${lastOldUid}`, folder, { uid: true });
        if (!copied) throw new Error(`COPY within ${folder} failed`);
        const deleted = await client.messageDelete(`1:${lastOldUid}`, { uid: true });
        if (!deleted) throw new Error(`expunging the originals in ${folder} failed`);
      });
    }
    const next = before >= 0xffffffffn ? 1n : before + 1n;
    await this.server.doveadm(['mailbox', 'update', '-u', user, '--uid-validity', next.toString(), folder]);
    const after = await this.serverUidValidity(user, folder);
    if (after !== next) throw await this.server.failure(`UIDVALIDITY of ${user}/${folder} is ${after}, wanted ${next}`);
    return after;
  }

  private async serverUidValidity(user: string, folder: string): Promise<bigint> {
    const out = await this.server.doveadm(['-f', 'flow', 'mailbox', 'status', '-u', user, 'uidvalidity', folder]);
    const match = /uidvalidity=(\d+)/.exec(out);
    if (!match?.[1]) throw await this.server.failure(`no uidvalidity in doveadm output: ${out}`);
    return BigInt(match[1]);
  }

  private async ensureFolder(client: ImapFlow, folder: string): Promise<void> {
    const existing = await client.list();
    if (existing.some((m) => m.path === folder)) return;
    await client.mailboxCreate(folder);
  }

  private async withClient<T>(user: string, use: (client: ImapFlow) => Promise<T>): Promise<T> {
    this.server.assertNotDestroyed();
    const account = this.server.users.find((u) => u.user === user);
    if (!account) throw new Error(`Dovecot harness: unknown user ${user}`);
    const client = new ImapFlow({
      host: HOST,
      port: this.server.imapPort,
      secure: false,
      auth: { user: account.user, pass: account.password },
      logger: false,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
    });
    client.on('error', () => {
      // surfaced through the failing command instead
    });
    try {
      await client.connect();
    } catch (error) {
      client.close();
      throw await this.server.failure(`IMAP login as ${user} failed: ${(error as Error).message}`);
    }
    try {
      return await use(client);
    } finally {
      await client.logout().catch(() => client.close());
    }
  }
}
