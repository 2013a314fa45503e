/**
 * Figure 5, initial sync: a mailbox of 10,000 generated messages (1,000 in quick mode) in a real
 * Dovecot, then the poller from an empty checkpoint ingests all of it while this process samples
 * its RSS: the peak, and the RSS at 10%, 50% and 100% of the sync to show that memory stays flat.
 *
 * The mail is dated 2025, older than REPLY_MAX_AGE (default 7 days, left as is): an initial sync of
 * an old mailbox stores and threads everything and drafts nothing, which this phase checks.
 * The mailbox is filled by a separate process (`sync-fill`, APPEND over one imapflow connection), so
 * generating 10,000 messages leaves nothing behind in the heap of the process being measured.
 */
import { createHash } from 'node:crypto';
import { ImapFlow } from 'imapflow';
import pg from 'pg';
import { startPoller } from '../../src/app/start-poller.ts';
import { startDovecot } from '../../test/support/dovecot.ts';
import { openHarness } from '../agent.ts';
import { generateMail } from '../generate-mail.ts';
import { runPhase, type PhaseContext } from '../phase-process.ts';
import { figure, megabytes, NO_TARGET, round, type PhaseResult } from '../report.ts';
import { RssSampler, settle } from '../rss.ts';

/** RSS at the end of the sync may exceed RSS half way by this much and still count as flat. */
const FLAT_TOLERANCE = 0.1;
const MARKS = [0.1, 0.5, 1] as const;

interface FillParams {
  host: string;
  port: number;
  user: string;
  password: string;
  count: number;
  seed: number;
}

/** The `sync-fill` phase: generates the mailbox and APPENDs it over one connection. */
export async function runSyncFill(ctx: PhaseContext): Promise<PhaseResult> {
  const p = ctx.params as unknown as FillParams;
  const client = new ImapFlow({ host: p.host, port: p.port, secure: false, auth: { user: p.user, pass: p.password }, logger: false });
  client.on('error', () => {
    // surfaced by the failing command
  });
  await client.connect();
  ctx.defer('log out of IMAP', () => client.logout().catch(() => client.close()));
  const hash = createHash('sha256');
  const started = performance.now();
  let bytes = 0;
  let replies = 0;
  let autoReplies = 0;
  const threads = new Set<number>();
  for await (const mail of generateMail({ seed: p.seed, count: p.count, supportAddress: p.user })) {
    hash.update(mail.raw);
    bytes += mail.raw.length;
    if (mail.position > 1) replies++;
    if (mail.kind === 'auto-reply') autoReplies++;
    else threads.add(mail.thread);
    // A third of the mail a person has already opened: the poller must not rely on \Unseen.
    const flags = mail.index % 3 === 0 ? ['\\Seen'] : [];
    const appended = await client.append('INBOX', mail.raw, flags, mail.date);
    if (!appended) throw new Error(`APPEND of message ${mail.index} failed`);
    if (mail.index > 0 && mail.index % 2000 === 0) ctx.log(`${mail.index} appended`);
  }
  const seconds = (performance.now() - started) / 1000;
  ctx.log(`${p.count} messages (${round(megabytes(bytes))} MB) appended in ${seconds.toFixed(1)} s`);
  return {
    figures: [],
    inputs: {
      mailbox: {
        seed: p.seed,
        messages: p.count,
        bytes,
        threads: threads.size,
        replies,
        autoReplies,
        seenFlagged: Math.ceil(p.count / 3),
        sha256: hash.digest('hex'),
        appendSeconds: round(seconds, 1),
      },
    },
  };
}

export async function runInitialSync(ctx: PhaseContext): Promise<PhaseResult> {
  const count = ctx.quick ? 1000 : 10_000;
  const account = { user: 'sync@acme.example', password: 'sync-pass' };
  const dovecot = await startDovecot({ users: [account] });
  ctx.defer('stop Dovecot', () => dovecot.destroy());

  const params: FillParams = {
    host: dovecot.host,
    port: dovecot.imapPort,
    user: account.user,
    password: account.password,
    count,
    seed: ctx.seed + 404,
  };
  // The agent opens while the mailbox fills (it does not touch IMAP until the poller starts).
  const filling = runPhase('sync-fill', { quick: ctx.quick, seed: ctx.seed, runId: ctx.runId, params: { ...params } }, 900_000, (r) =>
    ctx.track(r),
  );
  filling.catch(() => {
    // awaited below; this only keeps an early failure from being reported as unhandled
  });
  const h = await openHarness(
    ctx,
    {
      IMAP_HOST: dovecot.host,
      IMAP_PORT: String(dovecot.imapPort),
      IMAP_SECURE: 'false',
      IMAP_USER: account.user,
      IMAP_PASSWORD: account.password,
      SUPPORT_ADDRESS: account.user,
    },
    { workers: false },
  );
  const fill = await filling;
  const counter = new pg.Client({ connectionString: h.env['DATABASE_URL'] });
  await counter.connect();
  ctx.defer('close the counting connection', () => counter.end());
  const stored = async () => Number((await counter.query<{ n: string }>('SELECT count(*) AS n FROM "Message"')).rows[0]?.n ?? 0);

  await settle();
  const sampler = new RssSampler();
  sampler.start();
  const rssBefore = sampler.sample();
  const marks: Array<{ fraction: number; messages: number; rssBytes: number; seconds: number }> = [];
  const started = performance.now();
  const poller = startPoller(h.runtime);
  ctx.defer('stop the poller', () => poller.stop());
  const deadline = Date.now() + (ctx.quick ? 80_000 : 900_000);
  for (;;) {
    const n = await stored();
    for (const fraction of MARKS) {
      if (n >= fraction * count && !marks.some((m) => m.fraction === fraction)) {
        marks.push({ fraction, messages: n, rssBytes: sampler.sample(), seconds: (performance.now() - started) / 1000 });
      }
    }
    if (n >= count) break;
    if (Date.now() > deadline) throw new Error(`initial sync stored ${n} of ${count} messages before the deadline`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  const { peakBytes } = sampler.stop();
  await poller.stop();
  const drafts = await h.runtime.db.draft.count();
  const pendingReply = await h.runtime.db.message.count({ where: { status: 'pending_reply' } });
  const jobs = Object.values(await h.runtime.queues().turns.getJobCounts('waiting', 'prioritized', 'delayed', 'active')).reduce(
    (a, b) => a + b,
    0,
  );
  const at = (fraction: number) => marks.find((m) => m.fraction === fraction)?.rssBytes ?? Number.NaN;
  ctx.log(
    `${count} messages synced in ${seconds.toFixed(1)} s; RSS ${marks.map((m) => `${m.fraction * 100}%: ${megabytes(m.rssBytes).toFixed(0)} MB`).join(', ')}, peak ${megabytes(peakBytes).toFixed(0)} MB`,
  );

  const marksNote = `RSS before the sync ${megabytes(rssBefore).toFixed(0)} MB; at 10% ${megabytes(at(0.1)).toFixed(0)} MB, 50% ${megabytes(at(0.5)).toFixed(0)} MB, 100% ${megabytes(at(1)).toFixed(0)} MB`;
  const outcome = `${count} messages in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(1)} msg/s, not a figure: the context-size phase runs alongside); ${drafts} drafts, ${pendingReply} messages waiting for a reply, ${jobs} turn jobs (mail older than REPLY_MAX_AGE=7d is stored without replies)`;
  const scale = ctx.quick ? `quick mode: ${count} messages, not 10,000` : `${count} messages`;
  return {
    figures: [
      figure({
        name: `5. initial sync of ${count} messages, peak RSS`,
        value: megabytes(peakBytes),
        unit: 'MB',
        baseline: megabytes(rssBefore),
        target: NO_TARGET,
        met: null,
        notes: `${scale}; baseline: RSS of the same process with the agent open, just before the poller started; ${outcome}`,
      }),
      figure({
        name: `5. initial sync of ${count} messages, RSS at 100% vs 10%`,
        value: megabytes(at(1)),
        unit: 'MB',
        baseline: megabytes(at(0.1)),
        target: NO_TARGET,
        met: null,
        notes: `${scale}; includes the warm-up growth of the first part of the sync (JIT, query caches, buffers); ${marksNote}`,
      }),
      figure({
        name: `5. initial sync of ${count} messages, RSS at 100% vs 50%`,
        value: megabytes(at(1)),
        unit: 'MB',
        baseline: megabytes(at(0.5)),
        target: `<= ${100 + FLAT_TOLERANCE * 100}% (flat) and no drafts`,
        met: at(1) <= at(0.5) * (1 + FLAT_TOLERANCE) && drafts === 0,
        notes: `${scale}; memory that grew with the mailbox would grow over the second half as much as over the first; ${marksNote}; ${outcome}`,
      }),
    ],
    inputs: {
      'initial-sync': {
        method:
          'Dovecot filled by a separate process over one imapflow connection (APPEND with the Date header as INTERNALDATE, a third flagged \\Seen); then startPoller() from an empty checkpoint in this process (no workers), RSS sampled every 20 ms, stored messages counted every 100 ms',
        replyMaxAge: '7d (default); the mail is dated from 2025-03-03, so nothing is answered',
        ...fill.inputs,
        seconds: round(seconds, 1),
        rssMarksMB: marks.map((m) => ({
          at: `${m.fraction * 100}%`,
          messages: m.messages,
          rssMB: round(megabytes(m.rssBytes), 1),
          seconds: round(m.seconds, 1),
        })),
        drafts,
        pendingReply,
        turnJobs: jobs,
      },
    },
  };
}
