/**
 * The poller (`support-agent poll`, and part of `start`): one MailboxPoller for the configured
 * mailbox, feeding the one ingestion entry point, holding a Redis lease so only one poller serves
 * the mailbox at a time.
 */
import { AppError } from '../errors.ts';
import { MailboxPoller, type PollerDeps } from '../imap/mailbox-poller.ts';
import { createPollerStore } from '../imap/poller-store.ts';
import { ingestInOrder, type IngestDeps } from '../ingest/ingest-message.ts';
import { tryAcquireLease } from '../queue/redis-lease.ts';
import type { Runtime } from './runtime.ts';

const LEASE_TTL_MS = 30_000;

export function startPoller(runtime: Runtime): MailboxPoller {
  const { config } = runtime;
  const login = runtime.imapLogin;
  if (!login) throw new AppError('CONFIG_INVALID', 'polling needs IMAP_HOST, IMAP_USER and IMAP_PASSWORD (or MAIL_AUTH=oauth2)');
  const logger = runtime.logger.child('poller');
  const poller = new MailboxPoller({
    imap: { ...config.imap, ...login },
    store: createPollerStore(runtime.db, runtime.mailbox.id),
    ingest: ingestFetched(runtime.ingestDeps({ logger: logger.child('ingest') })),
    acquireLease: () => tryAcquireLease(runtime.redis(), `${config.queuePrefix}:poller-lease:${runtime.mailbox.id}`, LEASE_TTL_MS),
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
