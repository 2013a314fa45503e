/**
 * Erasure of one customer: the entity, its addresses, facts, decisions, commitments, its threads
 * with every message, draft and turn in them, its messages and our replies to it in other
 * people's threads, and every queued job that names any of it. Where another customer's mail
 * merely names the customer (a Cc, a quoted address), the address is redacted in place. Mail on
 * the IMAP server itself is the mailbox owner's and is not touched.
 */
import type { JobQueues } from '../queue/jobs.ts';
import { jsonStringArray } from '../store/client.ts';
import type { Db } from '../store/database.ts';

export interface ErasureReport {
  entityId: string;
  addresses: string[];
  threads: number;
  messages: number;
  redacted: number;
  jobs: number;
}

export const REDACTED_ADDRESS = 'erased@erased.invalid';

export async function eraseCustomer(db: Db, queues: JobQueues | null, entityId: string): Promise<ErasureReport> {
  const entity = await db.entity.findUniqueOrThrow({ where: { id: entityId }, include: { addresses: { orderBy: { address: 'asc' } } } });
  const addresses = entity.addresses.map((a) => a.address);
  const names = [entity.name, ...entity.addresses.map((a) => a.displayName)].filter((n): n is string => Boolean(n && n.length >= 3));
  const threadIds = (await db.thread.findMany({ where: { entityId }, select: { id: true } })).map((t) => t.id);
  const draftIds = (
    await db.draft.findMany({ where: { OR: [{ threadId: { in: threadIds } }, { toAddress: { in: addresses } }] }, select: { id: true } })
  ).map((d) => d.id);

  const { messages, redacted } = await db.$transaction(async (tx) => {
    const doomed = await tx.message.findMany({
      where: {
        OR: [{ entityId }, { fromAddress: { in: addresses } }, { threadId: { in: threadIds } }, { direction: 'outbound', toAddresses: { array_contains: addresses.slice(0, 1) } }],
      },
      select: { id: true, messageId: true, mailboxId: true },
    });
    const replies = await tx.draft.findMany({ where: { id: { in: draftIds } }, select: { messageId: true } });
    const doomedIds = [...doomed.map((m) => m.messageId), ...replies.map((r) => r.messageId)];
    await tx.draft.deleteMany({ where: { id: { in: draftIds } } });
    await tx.message.deleteMany({ where: { OR: [{ id: { in: doomed.map((m) => m.id) } }, { messageId: { in: replies.map((r) => r.messageId) } }] } });
    await tx.threadKey.deleteMany({ where: { messageId: { in: doomedIds } } });
    await tx.thread.deleteMany({ where: { id: { in: threadIds } } });
    await tx.threadParticipant.deleteMany({ where: { OR: [{ entityId }, { address: { in: addresses } }] } });
    await tx.llmCall.deleteMany({ where: { threadId: { in: threadIds } } });
    await tx.entity.delete({ where: { id: entityId } });
    return { messages: doomed.length, redacted: await redactMentions(tx, addresses, names) };
  });

  const jobs = queues ? await queues.removeJobsFor(new Set(threadIds), new Set(draftIds)) : 0;
  return { entityId, addresses, threads: threadIds.length, messages, redacted, jobs };
}

type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

/** Other customers' mail that names the erased customer keeps its place, without the name. */
async function redactMentions(tx: Tx, addresses: string[], names: string[]): Promise<number> {
  if (addresses.length === 0) return 0;
  const needles = [...addresses, ...names];
  const rawHits = new Set<string>();
  for (const needle of needles) {
    const rows = await tx.$queryRaw<Array<{ messageId: string }>>`SELECT "messageId" FROM "MessageRaw" WHERE position(convert_to(${needle}, 'UTF8') in raw) > 0`;
    for (const row of rows) rawHits.add(row.messageId);
  }
  const candidates = await tx.message.findMany({
    where: {
      OR: [
        { id: { in: [...rawHits] } },
        ...needles.flatMap((n) => [{ bodyText: { contains: n } }, { extractedText: { contains: n } }, { fromName: { contains: n } }]),
        ...addresses.flatMap((a) => [{ toAddresses: { array_contains: [a] } }, { ccAddresses: { array_contains: [a] } }, { replyTo: a }]),
      ],
    },
    include: { raw: true },
  });
  const scrub = (text: string) => needles.reduce((acc, n) => acc.split(n).join(n.includes('@') ? REDACTED_ADDRESS : '[erased]'), text);
  for (const m of candidates) {
    await tx.message.update({
      where: { id: m.id },
      data: {
        toAddresses: jsonStringArray(m.toAddresses).filter((a) => !addresses.includes(a)),
        ccAddresses: jsonStringArray(m.ccAddresses).filter((a) => !addresses.includes(a)),
        replyTo: m.replyTo && addresses.includes(m.replyTo) ? null : m.replyTo,
        fromName: m.fromName ? scrub(m.fromName) : m.fromName,
        bodyText: scrub(m.bodyText),
        extractedText: scrub(m.extractedText),
        ...(m.raw ? { raw: { update: { raw: new Uint8Array(Buffer.from(scrub(Buffer.from(m.raw.raw).toString('latin1')), 'latin1')) } } } : {}),
      },
    });
  }
  return candidates.length;
}
