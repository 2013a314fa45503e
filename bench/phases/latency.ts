/**
 * Figure 4, latency: from the start of an LMTP delivery into a real Dovecot to the draft row
 * stored in PostgreSQL, through the whole product (poller with IDLE or polling only, ingestion,
 * BullMQ, the worker's turn against the zero-latency scripted LLM server). The baseline is the
 * LMTP delivery round trip itself (connect, LHLO, MAIL, RCPT, DATA, reply), timed on the same
 * deliveries. Mail arrives open-loop at seeded, exponentially spaced moments (a Poisson stream),
 * so polling latency samples the whole poll interval instead of locking onto its phase.
 */
import { once } from 'node:events';
import pg from 'pg';
import { startPoller } from '../../src/app/start-poller.ts';
import { startDovecot, type DovecotServer, type DovecotUser } from '../../test/support/dovecot.ts';
import { openHarness } from '../agent.ts';
import { describeCorpus, generateCorpus, mulberry32 } from '../generate-mail.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, NO_TARGET, percentile, round, type Figure, type PhaseResult } from '../report.ts';
import { realisticTurnModel } from '../scripted-model.ts';

const IDLE_TARGET_MS = 1000;
const POLL_INTERVAL = '2s';
const WATCH_MS = 10;

interface Mode {
  label: string;
  env: Record<string, string>;
}

interface Measured {
  latencies: number[];
  lmtp: number[];
  lost: number;
  seconds: number;
  corpus: Record<string, unknown>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function measure(
  ctx: PhaseContext,
  dovecot: DovecotServer,
  user: DovecotUser,
  mode: Mode,
  count: number,
  meanGapMs: number,
  seed: number,
): Promise<Measured> {
  const h = await openHarness(
    ctx,
    {
      IMAP_HOST: dovecot.host,
      IMAP_PORT: String(dovecot.imapPort),
      IMAP_SECURE: 'false',
      IMAP_USER: user.user,
      IMAP_PASSWORD: user.password,
      SUPPORT_ADDRESS: user.user,
      // The generated mail carries 2025 dates; without this it would be too old to answer.
      REPLY_MAX_AGE: '36500d',
      ...mode.env,
    },
    { workers: true },
  );
  h.llm.setFallback(realisticTurnModel());
  // Draft lookups over plain node-postgres: cheaper than the ORM, so watching loads the machine less.
  const watcher = new pg.Client({ connectionString: h.env['DATABASE_URL'] });
  await watcher.connect();
  ctx.defer('close the watcher connection', () => watcher.end());

  const warm = await generateCorpus({ seed: seed + 7919, count: 3, startersOnly: true, supportAddress: user.user });
  const corpus = await generateCorpus({ seed, count, startersOnly: true, supportAddress: user.user });
  const pending = new Map<string, number>();
  const latencies: number[] = [];
  const lmtp: number[] = [];
  let watching = true;
  let watchError: unknown = null;
  const watchLoop = (async () => {
    while (watching) {
      if (pending.size > 0) {
        const { rows } = await watcher.query<{ inReplyTo: string }>('SELECT "inReplyTo" FROM "Draft" WHERE "inReplyTo" = ANY($1)', [
          [...pending.keys()],
        ]);
        const now = performance.now();
        for (const row of rows) {
          const sentAt = pending.get(row.inReplyTo);
          if (sentAt === undefined) continue;
          pending.delete(row.inReplyTo);
          latencies.push(now - sentAt);
        }
      }
      await sleep(WATCH_MS);
    }
  })().catch((error: unknown) => {
    watchError = error;
  });
  // Runs before the watcher connection closes (cleanups unwind newest first), also on SIGTERM.
  ctx.defer('stop watching for drafts', async () => {
    watching = false;
    await watchLoop;
  });

  const deliver = async (raw: Buffer, messageId: string, record: boolean) => {
    const started = performance.now();
    pending.set(messageId, started);
    await dovecot.deliver(user.user, raw);
    if (record) lmtp.push(performance.now() - started);
  };
  const drain = async (timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (pending.size > 0 && Date.now() < deadline) {
      if (watchError) throw watchError;
      await sleep(50);
    }
  };

  // Warm-up: the first turns pay for JIT, connection pools and the IMAP Drafts connection. The
  // warm-up mail is in the INBOX before the poller connects, which also keeps the folder from being
  // empty at SELECT: with IMAP_IDLE=false the poller never sees mail arriving in a folder that was
  // empty when its session began (see bench/README.md, "Findings").
  for (const m of warm) await deliver(m.raw, m.messageId, false);
  const poller = startPoller(h.runtime);
  ctx.defer('stop the poller', () => poller.stop());
  await Promise.race([once(poller, 'synced'), sleep(30_000).then(() => Promise.reject(new Error('the poller did not sync within 30 s')))]);
  await drain(30_000);
  if (pending.size > 0) throw new Error(`${pending.size} warm-up message(s) got no draft within 30 s`);
  latencies.length = 0;

  const rng = mulberry32(seed);
  const started = performance.now();
  let at = started;
  const deliveries: Array<Promise<void>> = [];
  for (const m of corpus) {
    at += -Math.log(1 - rng()) * meanGapMs;
    await sleep(at - performance.now());
    deliveries.push(deliver(m.raw, m.messageId, true));
  }
  await Promise.all(deliveries);
  await drain(60_000);
  const lost = pending.size;
  const seconds = (performance.now() - started) / 1000;
  ctx.log(
    `${mode.label}: ${latencies.length} drafts, p50 ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms; LMTP p50 ${percentile(lmtp, 50).toFixed(1)} ms${lost ? `; ${lost} without a draft after 60 s` : ''}`,
  );
  return { latencies, lmtp, lost, seconds, corpus: { seed, ...describeCorpus(corpus) } };
}

function latencyFigures(
  label: string,
  m: Measured,
  target: { p50: string; met: (p50: number) => boolean | null },
  notes: string,
): Figure[] {
  const lost = m.lost > 0 ? `; ${m.lost} message(s) got no draft within 60 s and are left out` : '';
  return [
    figure({
      name: `4. delivery to draft p50, ${label}`,
      value: percentile(m.latencies, 50),
      unit: 'ms',
      baseline: percentile(m.lmtp, 50),
      target: target.p50,
      met: target.met(percentile(m.latencies, 50)),
      notes: `${m.latencies.length} messages; baseline: LMTP delivery round trip p50${lost}; ${notes}`,
    }),
    figure({
      name: `4. delivery to draft p95, ${label}`,
      value: percentile(m.latencies, 95),
      unit: 'ms',
      baseline: percentile(m.lmtp, 95),
      target: NO_TARGET,
      met: null,
      notes: `baseline: LMTP delivery round trip p95; ${notes}`,
    }),
  ];
}

export async function runLatency(ctx: PhaseContext): Promise<PhaseResult> {
  const count = ctx.quick ? 40 : 200;
  const meanGapMs = ctx.quick ? 150 : 350;
  const idleUser = { user: 'idle@acme.example', password: 'idle-pass' };
  const pollUser = { user: 'poll@acme.example', password: 'poll-pass' };
  const dovecot = await startDovecot({ users: [idleUser, pollUser] });
  ctx.defer('stop Dovecot', () => dovecot.destroy());

  const idle = await ctx.scope(() =>
    measure(
      ctx,
      dovecot,
      idleUser,
      { label: 'IDLE', env: { IMAP_IDLE: 'true', IMAP_POLL_INTERVAL: '60s' } },
      count,
      meanGapMs,
      ctx.seed + 303,
    ),
  );
  const polling = await ctx.scope(() =>
    measure(
      ctx,
      dovecot,
      pollUser,
      { label: `polling every ${POLL_INTERVAL}`, env: { IMAP_IDLE: 'false', IMAP_POLL_INTERVAL: POLL_INTERVAL } },
      count,
      meanGapMs,
      ctx.seed + 304,
    ),
  );
  const sampleNote = ctx.quick ? `quick mode: ${count} messages per mode, not 200` : `${count} messages per mode`;
  return {
    figures: [
      ...latencyFigures(
        'IDLE',
        idle,
        { p50: `< ${IDLE_TARGET_MS} ms`, met: (p50) => p50 < IDLE_TARGET_MS },
        `${sampleNote}; IMAP_POLL_INTERVAL=60s as the IDLE safety net; mail that arrives within 15 s of a sync waits until imapflow starts IDLE (its default autoIdleDelay; bench/README.md, Findings 1)`,
      ),
      ...latencyFigures(
        `polling every ${POLL_INTERVAL}`,
        polling,
        { p50: NO_TARGET, met: () => null },
        `${sampleNote}; IMAP_IDLE=false, IMAP_POLL_INTERVAL=${POLL_INTERVAL}: the wait for the next poll dominates (uniform over the interval, about ${POLL_INTERVAL} / 2 on average)`,
      ),
    ],
    inputs: {
      latency: {
        method:
          'one real Dovecot (LMTP delivery, IMAP on loopback), one agent per mode with workers and the poller in this process, REPLY_MODE=draft with IMAP configured (drafts are also appended to the Drafts folder, after the row is stored); latency = draft row visible in PostgreSQL (polled every 10 ms) minus the start of the LMTP delivery',
        arrivals: `open loop, exponential gaps with mean ${meanGapMs} ms (seeded), every message a new thread from a new customer; 3 warm-up messages delivered before the poller starts (so the INBOX is not empty at SELECT; see the findings in bench/README.md)`,
        messagesPerMode: count,
        quick: ctx.quick,
        replyMaxAge: '36500d (the generated mail is dated 2025)',
        idle: { seconds: round(idle.seconds, 1), lost: idle.lost, lmtpP50Ms: round(percentile(idle.lmtp, 50)), corpus: idle.corpus },
        polling: {
          interval: POLL_INTERVAL,
          seconds: round(polling.seconds, 1),
          lost: polling.lost,
          lmtpP50Ms: round(percentile(polling.lmtp, 50)),
          corpus: polling.corpus,
        },
      },
    },
  };
}
