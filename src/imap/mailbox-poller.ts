/**
 * The IMAP poller: one long-lived imapflow connection per mailbox, IDLE with a periodic check as
 * well (IDLE can die silently), a fresh client for every reconnect (an imapflow client cannot be
 * reused once closed), BODY.PEEK fetches so a person's unread state is untouched, and a UID
 * checkpoint per folder that only moves after a message is safely stored.
 */
import { EventEmitter } from 'node:events';
import type { FetchMessageObject, ImapFlow, MailboxObject } from 'imapflow';
import { describeError } from '../errors.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, TOO_LARGE_KEEP_BYTES } from '../ingest/ingest-message.ts';
import type { Logger } from '../logger.ts';
import type { Lease } from '../queue/redis-lease.ts';
import type { FolderCheckpoint } from '../store/mailboxes.ts';
import { createImapClient, type ImapLogin } from './imap-client.ts';

export interface ImapSettings extends ImapLogin {
  folders: string[];
  pollIntervalMs: number;
  idle: boolean;
  processedAction: 'none' | 'flag' | 'move';
  processedFolder: string;
  /**
   * The team's Sent folder, read like the inbox (UID checkpoint, UIDVALIDITY rules) but never marked
   * or moved: `auto` finds it by its `\\Sent` special-use flag, `none` reads none, else a path.
   */
  sentFolder?: string;
}

export interface PollerStore {
  readCheckpoint(folder: string): Promise<FolderCheckpoint | null>;
  advanceCheckpoint(folder: string, uidValidity: bigint, lastUid: number): Promise<void>;
  /** Which of these Message-IDs are already stored for the mailbox. */
  knownMessageIds(messageIds: string[]): Promise<Set<string>>;
  recordStatus(status: { connected: boolean; lastError?: string | null }): Promise<void>;
}

export interface PollerDeps {
  imap: ImapSettings;
  store: PollerStore;
  /** Ingests fetched messages as if in the order given, calling `stored` for each, in that order, once it and every message before it are stored. */
  ingest(messages: readonly FetchedMessage[], stored: (uid: number) => Promise<void> | void): Promise<unknown>;
  /** Takes the mailbox's lease (one poller per mailbox); absent means "always ours". */
  acquireLease?: () => Promise<Lease | null>;
  leaseRenewMs?: number;
  reconnect?: { baseMs: number; maxMs: number };
  /**
   * A message whose RFC822.SIZE is above this is not downloaded whole: only its first
   * `TOO_LARGE_KEEP_BYTES` are fetched (BODY.PEEK[]<0.n>), and ingestion keeps them as too-large.
   */
  maxMessageBytes?: number;
  logger: Logger;
}

export interface FetchedMessage {
  raw: Buffer;
  folder: string;
  uid: number;
  /** The server's INTERNALDATE (arrival), else the time of the fetch. */
  receivedAt: Date;
  /** The server's RFC822.SIZE; above `maxMessageBytes`, `raw` holds only the message's first bytes. */
  size?: number;
  /** From the team's Sent folder. */
  sent?: boolean;
}

export interface SyncReport {
  folder: string;
  ingested: number;
  uidValidity: bigint;
  resynced: boolean;
}

export const PROCESSED_KEYWORD = '$SupportAgentProcessed';
const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
const MAX_CHUNK_MESSAGES = 50;

/**
 * Events: `synced` (SyncReport) after each folder sync, `connected`, `disconnected` (error|null),
 * `lease-waiting`.
 */
export class MailboxPoller extends EventEmitter {
  private stopped = false;
  private client: ImapFlow | null = null;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private syncing: Promise<void> | null = null;
  private syncAgain = false;
  /** The Sent folder's path on this connection (resolved once per session); null: none. */
  private sentPath: string | null = null;

  constructor(private readonly deps: PollerDeps) {
    super();
  }

  start(): void {
    this.stopped = false;
    this.loop ??= this.runLoop().finally(() => {
      this.loop = null;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    const client = this.client;
    if (client) await client.logout().catch(() => client.close());
    await this.loop;
  }

  private async runLoop(): Promise<void> {
    const { baseMs, maxMs } = this.deps.reconnect ?? { baseMs: 1000, maxMs: 60_000 };
    let failures = 0;
    while (!this.stopped) {
      let lease: Lease | null = null;
      try {
        lease = await this.waitForLease();
        if (!lease && this.deps.acquireLease) continue;
        const healthy = await this.session(lease);
        failures = healthy ? 0 : failures + 1;
      } catch (error) {
        failures++;
        this.deps.logger.warn('IMAP session failed', { error: describeError(error) });
        await this.deps.store.recordStatus({ connected: false, lastError: describeError(error) }).catch(() => {});
        this.emit('disconnected', error);
      } finally {
        await lease?.release().catch(() => {});
      }
      if (this.stopped) break;
      await this.sleep(Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1)));
    }
    await this.deps.store.recordStatus({ connected: false }).catch(() => {});
  }

  private async waitForLease(): Promise<Lease | null> {
    if (!this.deps.acquireLease) return null;
    let announced = false;
    while (!this.stopped) {
      const lease = await this.deps.acquireLease();
      if (lease) return lease;
      if (!announced) {
        announced = true;
        this.deps.logger.info('another poller holds this mailbox; standing by');
        this.emit('lease-waiting');
      }
      await this.sleep(this.deps.leaseRenewMs ?? 10_000);
    }
    return null;
  }

  /** One connection's life. Returns true when it ended by a clean stop, throws on failure. */
  private async session(lease: Lease | null): Promise<boolean> {
    const { imap } = this.deps;
    const client = await createImapClient(imap, { idle: imap.idle });
    this.client = client;
    let failure: Error | null = null;
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.on('error', (error: Error) => {
      failure ??= error;
    });
    const timers: NodeJS.Timeout[] = [];
    try {
      await client.connect();
      this.sentPath = await resolveSentFolder(client, imap.sentFolder ?? 'auto');
      await this.deps.store.recordStatus({ connected: true, lastError: null });
      this.emit('connected');
      this.deps.logger.info('IMAP connected', { folders: imap.folders, idle: imap.idle });

      const fail = (error: unknown) => {
        failure ??= error instanceof Error ? error : new Error(String(error));
        client.close();
      };
      client.on('exists', () => this.requestSync(client).catch(fail));
      timers.push(setInterval(() => this.requestSync(client).catch(fail), imap.pollIntervalMs));
      if (lease) {
        timers.push(
          setInterval(() => {
            lease.renew().then(
              (held) => held || fail(new Error('lost the mailbox lease to another poller')),
              (error: unknown) => fail(error),
            );
          }, this.deps.leaseRenewMs ?? 10_000),
        );
      }
      await this.requestSync(client).catch(fail);
      await closed;
    } finally {
      for (const timer of timers) clearInterval(timer);
      this.client = null;
      if (!client.isClosed) client.close();
      await this.syncing?.catch(() => {});
    }
    if (this.stopped) return true;
    throw failure ?? new Error('IMAP connection closed');
  }

  /** Serialises syncs: a request during a running sync makes it run once more afterwards. */
  private requestSync(client: ImapFlow): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      try {
        do {
          this.syncAgain = false;
          const sent = this.sentPath;
          // Sent first: IDLE then watches the folder selected last, the inbox, where customers write.
          const folders = [...(sent ? [sent] : []), ...this.deps.imap.folders.filter((f) => f !== sent)];
          for (const folder of folders) {
            if (this.stopped || client.isClosed) return;
            const report = await this.syncFolder(client, folder, folder === sent);
            this.emit('synced', report);
          }
        } while (this.syncAgain && !this.stopped);
      } finally {
        this.syncing = null;
      }
    })();
    return this.syncing;
  }

  private async syncFolder(client: ImapFlow, folder: string, sent: boolean): Promise<SyncReport> {
    const { store, logger } = this.deps;
    const lock = await client.getMailboxLock(folder);
    try {
      // Without IDLE the server only reports new mail in answer to a command: ask, or an empty
      // folder would look empty forever.
      await client.noop();
      const box = client.mailbox as MailboxObject;
      const checkpoint = await store.readCheckpoint(folder);
      const resynced = checkpoint !== null && checkpoint.uidValidity !== box.uidValidity;
      if (resynced) logger.warn('UIDVALIDITY changed; resynchronising by Message-ID', { folder });
      const fromUid = checkpoint && !resynced ? checkpoint.lastUid + 1 : 1;
      let ingested = 0;
      if (box.exists === 0) {
        if (!checkpoint || resynced) await store.advanceCheckpoint(folder, box.uidValidity, 0);
        return { folder, ingested, uidValidity: box.uidValidity, resynced };
      }
      // `n:*` always includes the highest UID even when it is below n, so filter again.
      const listing = (await client.fetchAll(`${fromUid}:*`, { uid: true, size: true, envelope: resynced }, { uid: true }))
        .filter((m) => m.uid >= fromUid)
        .sort((a, b) => a.uid - b.uid);
      let wanted = listing;
      if (resynced) {
        const ids = listing.map((m) => m.envelope?.messageId).filter((id): id is string => typeof id === 'string');
        const known = await store.knownMessageIds(ids);
        wanted = listing.filter((m) => !m.envelope?.messageId || !known.has(m.envelope.messageId));
      }
      const maxBytes = this.deps.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
      for (const chunk of chunkBySize(wanted, maxBytes)) {
        const messages = (await this.fetchChunk(client, folder, chunk, maxBytes)).map((m) => (sent ? { ...m, sent } : m));
        const stored: number[] = [];
        try {
          await this.deps.ingest(messages, (uid) => {
            stored.push(uid);
            ingested++;
          });
        } catch (error) {
          // Keep what was stored (best effort: the database may be what failed); the rest is fetched again.
          const last = stored.at(-1);
          if (last !== undefined) await store.advanceCheckpoint(folder, box.uidValidity, last).catch(() => undefined);
          throw error;
        }
        // Once per chunk, not per message: a crash in between only means fetching again what the
        // Message-ID key then recognises.
        const last = stored.at(-1);
        if (last !== undefined) await store.advanceCheckpoint(folder, box.uidValidity, last);
        // The team's sent mail stays where it is.
        if (!sent) await this.markProcessed(client, stored);
      }
      const highest = listing.at(-1)?.uid;
      if (highest !== undefined) await store.advanceCheckpoint(folder, box.uidValidity, highest);
      else if (!checkpoint || resynced) await store.advanceCheckpoint(folder, box.uidValidity, 0);
      return { folder, ingested, uidValidity: box.uidValidity, resynced };
    } finally {
      lock.release();
    }
  }

  /**
   * The chunk's sources in UID order. A message above the size cap is fetched only as far as ingestion
   * keeps it, so a 50 MB mail costs 1 MiB here; it is stored (skipped, too-large) like any other, and
   * the checkpoint moves past it.
   */
  private async fetchChunk(client: ImapFlow, folder: string, chunk: FetchMessageObject[], maxBytes: number): Promise<FetchedMessage[]> {
    const sizes = new Map(chunk.map((m) => [m.uid, m.size ?? 0]));
    const whole = chunk.filter((m) => (m.size ?? 0) <= maxBytes).map((m) => m.uid);
    const partial = chunk.filter((m) => (m.size ?? 0) > maxBytes).map((m) => m.uid);
    const fetched: FetchMessageObject[] = [];
    if (whole.length > 0)
      fetched.push(...(await client.fetchAll(whole.join(','), { uid: true, source: true, internalDate: true }, { uid: true })));
    if (partial.length > 0) {
      this.deps.logger.warn('fetching only the start of messages above MAX_MESSAGE_BYTES', { folder, uids: partial, maxBytes });
      const head = { start: 0, maxLength: TOO_LARGE_KEEP_BYTES };
      fetched.push(...(await client.fetchAll(partial.join(','), { uid: true, source: head, internalDate: true }, { uid: true })));
    }
    return fetched
      .sort((a, b) => a.uid - b.uid)
      .flatMap((m) =>
        m.source
          ? [
              {
                raw: m.source,
                folder,
                uid: m.uid,
                receivedAt: m.internalDate instanceof Date ? m.internalDate : new Date(),
                size: sizes.get(m.uid) ?? m.source.length,
              },
            ]
          : [],
      );
  }

  private async markProcessed(client: ImapFlow, uids: number[]): Promise<void> {
    const { processedAction, processedFolder } = this.deps.imap;
    if (uids.length === 0 || processedAction === 'none') return;
    if (processedAction === 'flag') {
      await client.messageFlagsAdd(uids, [PROCESSED_KEYWORD], { uid: true });
      return;
    }
    await client.mailboxCreate(processedFolder).catch(() => {
      // Already exists: the usual case after the first move.
    });
    await client.messageMove(uids, processedFolder, { uid: true });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

/**
 * The Sent folder's path: by the `\\Sent` special-use flag (RFC 6154; Gmail's "[Gmail]/Sent Mail",
 * Outlook's "Sent Items" carry it), else a folder named like one; a configured path is used as given.
 */
async function resolveSentFolder(client: ImapFlow, setting: string): Promise<string | null> {
  if (setting === 'none') return null;
  if (setting !== 'auto') return setting;
  const folders = await client.list();
  const sent = folders.find((f) => f.specialUse === '\\Sent') ?? folders.find((f) => /^sent( items| messages| mail)?$/i.test(f.name));
  return sent?.path ?? null;
}

function chunkBySize(messages: FetchMessageObject[], maxMessageBytes: number): FetchMessageObject[][] {
  const chunks: FetchMessageObject[][] = [];
  let current: FetchMessageObject[] = [];
  let bytes = 0;
  for (const message of messages) {
    // What is actually fetched: only the start of a message above the cap.
    const size = (message.size ?? 0) > maxMessageBytes ? TOO_LARGE_KEEP_BYTES : (message.size ?? 0);
    if (current.length > 0 && (bytes + size > MAX_CHUNK_BYTES || current.length >= MAX_CHUNK_MESSAGES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
