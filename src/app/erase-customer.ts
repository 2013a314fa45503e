/**
 * Erasure of one customer, the story (docs/guarantees.md "Guarantees", "Erasure leaves nothing"):
 *
 * 1. In one database transaction (src/store/erasure.ts): everything the customer owns is deleted
 *    (entity, addresses, facts, decisions, commitments; its threads with their messages, drafts,
 *    turns, promotion runs and LLM-call rows; its messages and our replies to it in other
 *    people's threads), and turns elsewhere that carried its mail lose their prompt.
 * 2. In the same transaction, everything that stays (other customers' rows) is redacted wherever
 *    it mentions the customer, by the rules of src/mail/erasure-patterns.ts: its addresses in any
 *    case and their encoded spellings, its full names and distinctive handles, and its given and
 *    family names where one of those also occurs. Every text and JSON column is covered
 *    (`ERASURE_COLUMNS`, checked against the schema by a test), and the stored original of every
 *    such message is rewritten part by part, or replaced by a re-rendering when it cannot be
 *    (src/mail/raw-redaction.ts).
 * 3. Redis: jobs, deduplication keys and events that name its threads or drafts are removed, and
 *    every other job's data, result, error and log is redacted by the same rules.
 *
 * The report holds counts only, never an erased value. Mail on the IMAP server itself belongs to
 * the mailbox owner and is not touched.
 */
import { erasureNeedles, Redactor, searchPlan } from '../mail/erasure-patterns.ts';
import { eraseFromOriginal, type ErasedOriginalSource } from '../mail/raw-redaction.ts';
import type { JobQueues, RedisErasure } from '../queue/jobs.ts';
import type { Db } from '../store/database.ts';
import { eraseEntity } from '../store/erasure.ts';

/** What an erasure changed, as counts. */
export interface ErasureReport {
  entityId: string;
  /** How many addresses and names were erased (not which). */
  addresses: number;
  names: number;
  /** Rows deleted per table. */
  deleted: Record<string, number>;
  /** Rows redacted in place per `Table.column`. */
  redacted: Record<string, number>;
  /** Values replaced whole: `Turn.prompt`, `MessageRaw.raw` (re-rendered originals). */
  replaced: Record<string, number>;
  /** Binary attachments emptied inside originals. */
  partsEmptied: number;
  /** Null when the command ran without Redis. */
  redis: RedisErasure | null;
}

export async function eraseCustomer(
  db: Db,
  queues: JobQueues | null,
  entityId: string,
  progress?: (done: number, total: number) => void,
): Promise<ErasureReport> {
  // Redis is checked first, so an unreachable Redis stops the erasure before the database changes
  // rather than leaving queued jobs behind after it.
  await queues?.ping();
  const erased = await eraseEntity(
    db,
    entityId,
    (subject) => {
      const needles = erasureNeedles({ addresses: subject.addresses, names: subject.names });
      const text = new Redactor(needles, 'text');
      return {
        search: searchPlan(needles),
        redactText: (value: string) => text.redact(value),
        redactOriginal: (raw: Buffer, mentioned: boolean, source: ErasedOriginalSource) =>
          eraseFromOriginal(raw, needles, mentioned, source),
      };
    },
    progress,
  );
  const redis = queues
    ? await queues.removeJobsFor({
        threadIds: new Set(erased.subject.threadIds),
        draftIds: new Set(erased.subject.draftIds),
        redact: erased.rules.redactText,
      })
    : null;
  return {
    entityId,
    addresses: erased.subject.addresses.length,
    names: erased.subject.names.length,
    deleted: erased.deleted,
    redacted: erased.redacted,
    replaced: erased.replaced,
    partsEmptied: erased.partsEmptied,
    redis,
  };
}

/** The report as lines for people (the CLI and the log); counts only. */
export function describeErasure(report: ErasureReport): string[] {
  const list = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'nothing';
  const lines = [
    `Erased ${report.entityId} (${report.addresses} address(es), ${report.names} name(s)).`,
    `Deleted rows: ${list(report.deleted)}.`,
    `Redacted in other customers' data: ${list(report.redacted)}.`,
    `Replaced whole: ${list(report.replaced)}${report.partsEmptied > 0 ? `; ${report.partsEmptied} attachment(s) emptied` : ''}.`,
  ];
  const r = report.redis;
  lines.push(
    r
      ? `Redis: ${r.jobsRemoved} job(s) removed, ${r.keysDeleted} key(s) deleted, ${r.eventsRemoved} event(s) removed, ` +
          `${r.fieldsRedacted} job field(s), ${r.logLinesRedacted} log line(s) and ${r.stringsRedacted} value(s) redacted ` +
          `(${r.keysScanned} key(s) scanned).`
      : 'Redis: not reached.',
  );
  return lines;
}
