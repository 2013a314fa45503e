/**
 * The pollers (`support-agent poll`, and part of `start`): one MailboxPoller per served mailbox,
 * each with its own UID checkpoints, feeding the one ingestion entry point, each holding a Redis
 * lease so only one poller serves a mailbox at a time.
 */
import { AppError } from '../errors.ts';
import { MailboxPoller, type PollerDeps } from '../imap/mailbox-poller.ts';
import { createPollerStore } from '../imap/poller-store.ts';
import { ingestInOrder, type IngestDeps } from '../ingest/ingest-message.ts';
import { tryAcquireLease } from '../queue/redis-lease.ts';
import type { MailboxRuntime, Runtime } from './runtime.ts';

const LEASE_TTL_MS = 30_000;

/** The poller of one mailbox (the primary one by default). */
export function startPoller(runtime: Runtime, served: MailboxRuntime = runtime.mailboxes[0]!): MailboxPoller {
  const { config } = runtime;
  const { mailbox, settings } = served;
  const login = served.imapLogin;
  if (!login)
    throw new AppError(
      'CONFIG_INVALID',
      runtime.mailboxes.length > 1
        ? `polling ${mailbox.address} needs its imap host, user and password (or auth: oauth2) in MAILBOXES_FILE`
        : 'polling needs IMAP_HOST, IMAP_USER and IMAP_PASSWORD (or MAIL_AUTH=oauth2)',
    );
  const logger = runtime.mailboxes.length > 1 ? runtime.logger.child('poller').child(mailbox.address) : runtime.logger.child('poller');
  const poller = new MailboxPoller({
    imap: { ...settings.imap, ...login },
    store: createPollerStore(runtime.db, mailbox.id),
    ingest: ingestFetched(served.ingestDeps({ logger: logger.child('ingest') })),
    acquireLease: () => tryAcquireLease(runtime.redis(), `${config.queuePrefix}:poller-lease:${mailbox.id}`, LEASE_TTL_MS),
    leaseRenewMs: LEASE_TTL_MS / 3,
    maxMessageBytes: config.mail.maxMessageBytes,
    logger,
  });
  poller.on('synced', (report: { folder: string; ingested: number }) => {
    if (report.ingested > 0) logger.info('synced', { folder: report.folder, ingested: report.ingested });
  });
  poller.start();
  return poller;
}

/**
 * A poller for every served mailbox (`all`), or for those with IMAP configured (`configured`);
 * the others are named in the log. Stopping stops them all.
 */
export function startPollers(runtime: Runtime, which: 'all' | 'configured'): { count: number; stop(): Promise<void> } {
  const pollers: MailboxPoller[] = [];
  try {
    for (const served of runtime.mailboxes) {
      if (which === 'configured' && !served.imapLogin) {
        if (runtime.mailboxes.length > 1)
          runtime.logger.warn('IMAP is not configured for this mailbox: not polling it', { mailbox: served.mailbox.address });
        continue;
      }
      pollers.push(startPoller(runtime, served));
    }
  } catch (error) {
    for (const poller of pollers) void poller.stop();
    throw error;
  }
  return {
    count: pollers.length,
    stop: async () => {
      await Promise.all(pollers.map((p) => p.stop()));
    },
  };
}

/** The poller's ingestion: fetched messages in UID order through `ingestInOrder`. */
export function ingestFetched(deps: IngestDeps): PollerDeps['ingest'] {
  return (messages, stored) =>
    ingestInOrder(
      deps,
      messages.map((m) => ({
        raw: m.raw,
        source: { kind: 'imap', folder: m.folder, uid: m.uid },
        options: {
          receivedAt: m.receivedAt,
          ...(m.size === undefined ? {} : { totalBytes: m.size }),
          ...(m.sent ? { sentByTeam: true } : {}),
        },
      })),
      (_result, index) => stored(messages[index]!.uid),
    );
}
