/**
 * Figure 1, ingestion: messages per second through `ingestInOrder` (parse, classify, resolve,
 * thread, persist, then enqueue the BullMQ turn job on real Redis), fed fetched chunks of 50 as the
 * poller feeds it, against mailparser's `simpleParser` on the same bytes and nothing else. A message
 * is stored after every earlier one it could depend on; unrelated customers' mail is stored side by
 * side, and parsing overlaps storing. Also the peak RSS of the process while it ingests (figure 5).
 */
import { simpleParser } from 'mailparser';
import type { Runtime } from '../../src/app/runtime.ts';
import { DEFAULT_ATTACHMENT_SETTINGS } from '../../src/ingest/attachment-text.ts';
import { ingestInOrder, MAX_SIDE_BY_SIDE, type IngestDeps, type IngestItem } from '../../src/ingest/ingest-message.ts';
import { openHarness, openPgliteRuntime, pollerIngestDeps } from '../agent.ts';
import { countSqlStatements, describeCpu, startCpuMeter } from '../cpu.ts';
import { describeCorpus, generateCorpus, type GeneratedMail } from '../generate-mail.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, megabytes, NO_TARGET, round, type PhaseResult } from '../report.ts';
import { RssSampler, settle } from '../rss.ts';
import { withAttachments } from '../attached-corpus.ts';

const TARGET_RATIO = 0.25;

async function parseOnlyRate(corpus: readonly GeneratedMail[]): Promise<number> {
  const started = performance.now();
  for (const mail of corpus) await simpleParser(mail.raw);
  return corpus.length / ((performance.now() - started) / 1000);
}

let nextUid = 1;
/** The poller hands the ingester fetched chunks of at most 50 messages (src/imap/mailbox-poller.ts). */
const POLLER_CHUNK = 50;

async function ingestAll(
  deps: IngestDeps,
  corpus: readonly GeneratedMail[],
): Promise<{ seconds: number; processed: number; replyNeeded: number; skipped: number }> {
  let processed = 0;
  let replyNeeded = 0;
  let skipped = 0;
  const started = performance.now();
  for (let at = 0; at < corpus.length; at += POLLER_CHUNK) {
    const items: IngestItem[] = corpus.slice(at, at + POLLER_CHUNK).map((mail) => ({
      raw: mail.raw,
      source: { kind: 'imap', folder: 'INBOX', uid: nextUid++ },
      // A virtual clock just after each message's date, as the replay does: every customer message is fresh enough to answer.
      options: { receivedAt: new Date(mail.date.getTime() + 30_000), now: new Date(mail.date.getTime() + 60_000) },
    }));
    for (const result of await ingestInOrder(deps, items)) {
      if (result.outcome === 'processed') processed++;
      else skipped++;
      if (result.replyNeeded) replyNeeded++;
    }
  }
  return { seconds: (performance.now() - started) / 1000, processed, replyNeeded, skipped };
}

export async function runIngestion(ctx: PhaseContext, backend: 'postgresql' | 'pglite'): Promise<PhaseResult> {
  const count = ctx.quick ? 100 : 1500;
  const warmCount = ctx.quick ? 10 : 100;
  const corpus = await generateCorpus({ seed: ctx.seed, count });
  const warm = await generateCorpus({ seed: ctx.seed + 7919, count: warmCount });
  ctx.log(`${count} messages generated (${round(megabytes(corpus.reduce((s, m) => s + m.raw.length, 0)))} MB)`);

  const statements = backend === 'postgresql' ? countSqlStatements() : null;

  let runtime: Runtime;
  if (backend === 'postgresql') {
    runtime = (await openHarness(ctx, {}, { workers: false })).runtime;
  } else {
    runtime = await openPgliteRuntime(ctx);
  }
  const deps = pollerIngestDeps(runtime);
  await ingestAll(deps, warm);

  await settle();
  const sampler = new RssSampler();
  sampler.start();
  const rssBefore = sampler.sample();
  const statementsBefore = statements?.read() ?? 0;
  const cpu = startCpuMeter();
  const run = await ingestAll(deps, corpus);
  const cpuReport = cpu.stop();
  const statementsPerMessage = statements ? (statements.read() - statementsBefore) / count : null;
  const rss = sampler.stop();
  const jobs = await runtime.queues().turns.getJobCounts('waiting', 'prioritized', 'delayed');
  const waitingJobs = Object.values(jobs).reduce((a, b) => a + b, 0);
  const rate = count / run.seconds;
  ctx.log(`${backend}: ${count} messages in ${run.seconds.toFixed(1)} s (${rate.toFixed(1)}/s), ${waitingJobs} turn jobs waiting`);

  // The parse-only baseline runs after the ingestion, so the garbage it leaves (mailparser keeps
  // every attachment) does not inflate the RSS figure. Two runs; the faster is the baseline, so
  // noise can only make the ratio look worse.
  await parseOnlyRate(warm);
  const parseFirst = await parseOnlyRate(corpus);
  const parseSecond = await parseOnlyRate(corpus);
  const parseRate = Math.max(parseFirst, parseSecond);
  const label = backend === 'postgresql' ? 'PostgreSQL' : 'PGlite (file-backed, DATA_DIR)';
  const attached = await attachedFigure(ctx, deps, corpus, label);
  const details = `${count} messages in order, in chunks of ${POLLER_CHUNK} as the poller fetches them (related messages stored in order, up to ${MAX_SIDE_BY_SIDE} unrelated ones side by side, the next parsed meanwhile); ${run.processed} customer messages stored, ${run.skipped} skipped (auto-replies), ${run.replyNeeded} needed a reply and ${waitingJobs} turn jobs (deduplicated per thread) were waiting in BullMQ afterwards; parse-only runs right after: ${parseFirst.toFixed(0)} and ${parseSecond.toFixed(0)} msg/s (the faster is the baseline)`;
  return {
    figures: [
      figure({
        name: `1. ingestion rate, ${label}`,
        value: rate,
        unit: 'msg/s',
        baseline: parseRate,
        target: backend === 'postgresql' ? `>= ${TARGET_RATIO * 100}% of parse-only` : NO_TARGET,
        met: backend === 'postgresql' ? rate / parseRate >= TARGET_RATIO : null,
        notes: `${details}${statementsPerMessage === null ? '' : `; ${statementsPerMessage.toFixed(1)} SQL statements per message`}; while ingesting, ${describeCpu(cpuReport)}`,
      }),
      figure({
        name: `5. peak RSS during ingestion, ${label}`,
        value: megabytes(rss.peakBytes),
        unit: 'MB',
        baseline: megabytes(rssBefore),
        target: NO_TARGET,
        met: null,
        notes: `baseline: RSS of the same process just before the timed ingestion (runtime open, ${count}-message corpus in memory); ${rss.samples} samples`,
      }),
      attached,
    ],
    inputs: {
      [`ingestion-${backend}`]: {
        database:
          backend === 'postgresql'
            ? 'PostgreSQL 127.0.0.1:5432, fresh database per run (test/support/postgres.ts)'
            : 'PGlite via openRuntime with DATA_DIR in a temp dir (openDatabase({ databaseUrl: undefined, dataDir }) + applyMigrations)',
        corpus: { seed: ctx.seed, ...describeCorpus(corpus) },
        warmUp: { seed: ctx.seed + 7919, messages: warmCount },
        source: `{ kind: 'imap', folder: 'INBOX' }, ingestInOrder in chunks of ${POLLER_CHUNK}`,
        clock:
          'receivedAt = Date header + 30 s, now = Date header + 60 s (virtual, so every customer message needs a reply and enqueues a turn)',
        statementsPerMessage: statementsPerMessage === null ? undefined : round(statementsPerMessage, 1),
      },
    },
  };
}

/**
 * The same ingestion over a corpus where every mail has an attachment (a PDF, a Word file or a CSV
 * in turn, attached-corpus.ts), against parse-only on those same bytes, in the same run: what the
 * warm attachment readers cost when every message needs one.
 */
async function attachedFigure(ctx: PhaseContext, deps: IngestDeps, corpus: readonly GeneratedMail[], label: string) {
  const attached = withAttachments(corpus.slice(0, ctx.quick ? 60 : 300));
  const run = await ingestAll(deps, attached);
  const rate = attached.length / run.seconds;
  const parseRate = Math.max(await parseOnlyRate(attached), await parseOnlyRate(attached));
  ctx.log(
    `${label}, every mail with an attachment: ${attached.length} in ${run.seconds.toFixed(1)} s (${rate.toFixed(1)}/s), parse-only ${parseRate.toFixed(0)}/s`,
  );
  return figure({
    name: `1. ingestion rate, every mail with an attachment, ${label}`,
    value: rate,
    unit: 'msg/s',
    baseline: parseRate,
    target: NO_TARGET,
    met: null,
    notes: `${attached.length} messages, each with one readable file (a 2-page PDF, a .docx or a CSV in turn) read by the warm attachment readers (ATTACHMENT_WORKERS=${DEFAULT_ATTACHMENT_SETTINGS.workers}); parse-only (mailparser) on the same bytes, the faster of two runs`,
  });
}
