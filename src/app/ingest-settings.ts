import type { Config } from '../config.ts';
import type { IngestSettings } from '../ingest/ingest-message.ts';
import type { DbClient } from '../store/client.ts';
import { getOrCreateSecret } from '../store/settings.ts';

/** The signing secret for the agent's Message-IDs: configured, or generated once per database. */
async function messageIdSecret(config: Config, db: DbClient): Promise<string> {
  return config.trust.messageIdSecret ?? getOrCreateSecret(db, 'message-id-secret');
}

export async function ingestSettings(
  config: Config,
  db: DbClient,
  supportAddress = config.supportAddress,
  entityKey: 'address' | 'domain' = config.mailboxes[0]!.entityKey,
): Promise<IngestSettings> {
  return {
    supportAddress,
    staffAddresses: config.staffAddresses,
    entityKey: { mode: entityKey, extraFreeMailDomains: config.entity.extraFreeMailDomains },
    foldPlusAddresses: config.entity.foldPlusAddresses,
    subjectWindowMs: config.memory.subjectWindowMs,
    authservId: config.trust.authservId,
    messageIdSecret: await messageIdSecret(config, db),
    replyMaxAgeMs: config.replyMaxAgeMs,
    maxMessageBytes: config.mail.maxMessageBytes,
    parsing: config.mail.parsing,
    attachments: config.mail.attachments,
  };
}
