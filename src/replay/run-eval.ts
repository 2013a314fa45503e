/**
 * `support-agent eval`: replays a mailbox's history (the customers' mails and the team's real
 * replies) in Date order on a fresh embedded database with the virtual clock, exactly as
 * `replay` does, with the team's mail ingested as the team's replies (so later drafts see them in
 * the thread). For each customer mail the team answered, the agent's draft -- made from the
 * memory built so far -- is paired with the team's real reply and scored (eval-score.ts).
 */
import { importKnowledge } from '../app/import-knowledge.ts';
import { openRuntime } from '../app/runtime.ts';
import { VirtualScheduler, virtualClock } from '../app/virtual-scheduler.ts';
import type { Config } from '../config.ts';
import { AppError, describeError } from '../errors.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, ingestRawMessage } from '../ingest/ingest-message.ts';
import { withCircuitBreaker } from '../llm/circuit-breaker.ts';
import { createProvider } from '../llm/create-provider.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import { openMemoryDatabase } from '../store/database.ts';
import { loadEvalPair } from '../store/eval-pairs.ts';
import { scorePair, summarise, type EvalSummary, type PairScore } from './eval-score.ts';
import { readHistory } from './history-files.ts';
import { decideTeamMail } from '../mail/team-identity.ts';

export interface EvalOptions {
  input: string;
  /**
   * The team's Sent folder exported (mbox, Maildir or .eml folder): its mail from a team address is
   * the team's, proven by the channel. Without it, only mail in `input` that carries an aligned DMARC
   * pass from TRUSTED_AUTHSERV_ID counts as the team's (docs/team-identity.md).
   */
  sent?: string | undefined;
  /** The support mailbox's address: its mail is the team's. */
  address: string;
  config: Config;
  logger: Logger;
  provider?: LlmProvider;
  progress?: (done: number, total: number) => void;
  /** Called once the input is read and the database is open, before the first mail (the command names its model then). */
  started?: () => void;
  /** Knowledge-base folders or files imported before the history, as `replay --kb` does. */
  knowledge?: readonly string[];
}

export interface EvalPair extends PairScore {
  customerMessageId: string;
  teamReplyMessageId: string;
  threadId: string;
  draftId: string;
  draft: string;
  teamReply: string;
}

export interface EvalReport {
  provider: string;
  model: string;
  address: string;
  messages: number;
  customerMails: number;
  /** Mail from a team address without proof (not from --sent, no aligned DMARC pass): counted as no one's reply. */
  unprovenTeamMails: number;
  /** Customer mails the team answered (each the target of a pair). */
  answered: number;
  /** Answered customer mails the agent drafted no reply for (skipped, or covered by a draft already paired). */
  undrafted: number;
  /** Answered customer mails whose turn failed (the model unreachable or erroring): never scored. */
  modelFailures: Array<{ customerMessageId: string; threadId: string; reason: string }>;
  pairs: EvalPair[];
  summary: EvalSummary;
  failures: string[];
}

interface HistoryMail {
  name: string;
  raw: Buffer;
  /** Read from the team's Sent folder export (`--sent`). */
  sent: boolean;
  date: Date | null;
  from: string | null;
  fromFields: number;
  authenticationResults: string[];
  messageId: string | null;
  inReplyTo: string | null;
  needsHuman: boolean | null;
}

/** The few header fields the evaluation orders and pairs by (the header section only, unfolded). */
function headerFields(raw: Buffer): Omit<HistoryMail, 'name' | 'raw' | 'sent'> {
  const text = raw.subarray(0, 256 * 1024).toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const headers = (end >= 0 ? text.slice(0, end) : text).replace(/\r?\n[ \t]+/g, ' ');
  const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(headers)?.[1]?.trim() ?? null;
  const date = field('date');
  const parsed = date ? new Date(date) : null;
  const from = field('from');
  const address = from ? (/<([^<>\s]+@[^<>\s]+)>/.exec(from)?.[1] ?? /\S+@\S+/.exec(from)?.[0] ?? null) : null;
  const label = field('x-needs-human')?.toLowerCase() ?? null;
  const all = (name: string) => [...headers.matchAll(new RegExp(`^${name}:[ \\t]*(.*)$`, 'gim'))].map((m) => m[1]!.trim());
  return {
    date: parsed && Number.isFinite(parsed.getTime()) ? parsed : null,
    from: address?.toLowerCase() ?? null,
    fromFields: all('from').length,
    authenticationResults: all('authentication-results'),
    messageId: /<[^<>\s]+>/.exec(field('message-id') ?? '')?.[0] ?? null,
    inReplyTo: /<[^<>\s]+>/.exec(field('in-reply-to') ?? '')?.[0] ?? null,
    needsHuman: label === 'yes' || label === 'true' ? true : label === 'no' || label === 'false' ? false : null,
  };
}

export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const maxBytes = options.config.mail.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const inbox = await readHistory(options.input, maxBytes);
  const sent = options.sent ? await readHistory(options.sent, maxBytes) : [];
  const history = [...inbox.map((m) => ({ ...m, sent: false })), ...sent.map((m) => ({ ...m, sent: true }))].map((m, index) => ({
    ...m,
    ...headerFields(m.raw),
    index,
  }));
  if (history.length === 0) throw new AppError('INPUT_INVALID', `no messages found in ${options.input}`);
  history.sort((a, b) => (a.date?.getTime() ?? Infinity) - (b.date?.getTime() ?? Infinity) || a.index - b.index);

  // The team's mail is decided as ingestion decides it (src/mail/team-identity.ts): by the channel
  // (the Sent export) or an aligned DMARC pass, never by From alone.
  const team = { supportAddress: options.address, staffAddresses: options.config.staffAddresses };
  const verdict = (m: HistoryMail) =>
    decideTeamMail(
      {
        channel: m.sent ? 'sent-folder' : 'inbound',
        from: m.from,
        fromFields: m.fromFields,
        authenticationResults: m.authenticationResults,
        authservId: options.config.trust.authservId,
      },
      team,
    ).kind;
  const isTeam = (m: HistoryMail) => verdict(m) === 'team';
  const isCustomer = (m: HistoryMail) => !m.sent && verdict(m) === 'not-team';
  if (!history.some(isTeam)) throw noTeamMail(options, history, history.filter((m) => !m.sent && verdict(m) === 'unproven').length);
  // The team's first reply to each customer mail is the reference for the agent's draft.
  const customerIds = new Set(history.filter((m) => isCustomer(m) && m.messageId).map((m) => m.messageId!));
  const references = new Map<string, HistoryMail>();
  for (const m of history) {
    if (isTeam(m) && m.inReplyTo && m.messageId && customerIds.has(m.inReplyTo) && !references.has(m.inReplyTo))
      references.set(m.inReplyTo, m);
  }

  const clock = virtualClock(history.find((m) => m.date)?.date ?? new Date(0));
  const provider = withCircuitBreaker(options.provider ?? createProvider(options.config.llm, options.logger));
  const runtime = await openRuntime(options.config, options.logger, {
    database: await openMemoryDatabase(),
    supportAddress: options.address,
    now: clock.now,
    provider,
    offline: true,
  });
  options.started?.();
  try {
    const failures: string[] = [];
    if (options.knowledge && options.knowledge.length > 0) {
      const imported = await importKnowledge(runtime.db, options.knowledge, runtime.kbImportOptions(), clock.now());
      for (const skipped of imported.skipped) failures.push(`knowledge ${skipped.source}: ${skipped.reason}`.slice(0, 500));
    }
    const scheduler = new VirtualScheduler(clock, (f) => failures.push(`${f.stage} ${f.threadId ?? ''}: ${f.error}`.slice(0, 500)));
    const pipeline = runtime.pipeline(scheduler);
    const ingestDeps = runtime.ingestDeps({ pipeline, logger: options.logger });
    for (const [index, mail] of history.entries()) {
      if (mail.date && mail.date > clock.now()) await scheduler.runUntil(mail.date, pipeline);
      const at = clock.now();
      await ingestRawMessage(
        ingestDeps,
        mail.raw,
        { kind: 'replay', file: mail.name },
        { receivedAt: at, now: at, sentByTeam: mail.sent },
      ).catch((error: unknown) => failures.push(`ingest ${mail.name}: ${describeError(error)}`.slice(0, 500)));
      // The turn a customer mail starts runs now, before the team's reply arrives.
      await scheduler.runUntil(clock.now(), pipeline);
      options.progress?.(index + 1, history.length);
    }

    const pairs: EvalPair[] = [];
    const pairedDrafts = new Set<string>();
    const modelFailures: EvalReport['modelFailures'] = [];
    let undrafted = 0;
    for (const [customerMessageId, reply] of references) {
      const record = await loadEvalPair(runtime.db, runtime.mailbox.id, customerMessageId, reply.messageId!);
      if (!record?.draft || !record.turn || record.teamReply === null || pairedDrafts.has(record.draft.id)) {
        undrafted++;
        continue;
      }
      if (record.turn.failed) {
        // A note for a person is not the model's reply: scoring it would report a dead model as a weak one.
        const reason = failures.find((f) => f.includes(record.threadId)) ?? 'the turn failed';
        modelFailures.push({ customerMessageId, threadId: record.threadId, reason: reason.slice(0, 300) });
        continue;
      }
      pairedDrafts.add(record.draft.id);
      const score = scorePair({
        draft: record.draft.body,
        teamReply: record.teamReply,
        context: record.turn.prompt,
        profileValues: record.profileValues,
        agentNeedsHuman: record.draft.needsHuman,
        teamNeedsHuman: reply.needsHuman,
        promptTokens: record.turn.promptTokens,
        completionTokens: record.turn.completionTokens,
        modelCalls: record.turn.modelCalls,
      });
      pairs.push({
        customerMessageId,
        teamReplyMessageId: reply.messageId!,
        threadId: record.threadId,
        draftId: record.draft.id,
        draft: record.draft.body,
        teamReply: record.teamReply,
        ...score,
      });
    }
    return {
      provider: provider.name,
      model: provider.model,
      address: options.address,
      messages: history.length,
      customerMails: history.filter(isCustomer).length,
      unprovenTeamMails: history.filter((m) => !m.sent && verdict(m) === 'unproven').length,
      answered: references.size,
      undrafted,
      modelFailures,
      pairs,
      summary: summarise(pairs),
      failures,
    };
  } finally {
    await runtime.close();
  }
}

/** No proven team reply means no pair: say why (a wrong --address, or no proof), with the busiest senders. */
function noTeamMail(
  options: Pick<EvalOptions, 'address' | 'input' | 'sent'>,
  history: ReadonlyArray<{ from: string | null }>,
  unproven: number,
): AppError {
  const counts = new Map<string, number>();
  for (const m of history) if (m.from) counts.set(m.from, (counts.get(m.from) ?? 0) + 1);
  const busiest = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 3)
    .map(([from, n]) => `${from} (${n})`);
  const why =
    unproven > 0
      ? `${unproven} mail(s) from the team's addresses carry no proof (no aligned DMARC pass from TRUSTED_AUTHSERV_ID): give the team's Sent folder with --sent`
      : `no mail from ${options.address} (or STAFF_ADDRESSES)${options.sent ? '' : ' and no --sent folder'}; the most frequent senders are ${busiest.join(', ') || 'none'}: give the team's address with --address`;
  return new AppError('INPUT_INVALID', `no team reply in ${options.input} to score against: ${why}`);
}
