/**
 * Figure 2, context size: prompt tokens of the context the agent assembles for a reply turn, at
 * thread lengths 1, 10, 50 and 200, against a prompt that replays the whole transcript (every
 * customer message's extracted text concatenated, plus the same system prompt).
 *
 * Drives the real turn path: each message of one generated 200-message thread is ingested through
 * `ingestRawMessage`, then `handleThreadTurn` runs with the runtime's `turnDeps()` against the
 * scripted model (bench/scripted-model.ts), whose summaries and open items grow every turn, so
 * only the product's caps keep the context small. The prompt size is the turn row's `promptTokens`.
 */
import { handleThreadTurn } from '../../src/app/handle-thread-turn.ts';
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import { silentLogger } from '../../src/logger.ts';
import { buildTurnSystemPrompt } from '../../src/memory/context.ts';
import { countTokens, truncateToTokens } from '../../src/memory/tokens.ts';
import { openHarness } from '../agent.ts';
import { describeCorpus, generateThread } from '../generate-mail.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, NO_TARGET, round, type Figure, type PhaseResult } from '../report.ts';
import { identifiersOf, realisticTurnModel } from '../scripted-model.ts';

const LENGTHS = [1, 10, 50, 200] as const;
/** Where the survival of early identifiers is read (the issue's "message 150"). */
const SURVIVAL_AT = 150;
/** Stated once each in messages 1-5 of the generated thread, never again. */
const EARLY_REFERENCES = ['WS-48213', 'TK-77120', 'ERR-4042', 'INV-5120', 'PO-88213'];
const TARGET_RATIO_AT_200 = 0.05;
/** How much the context without the new email may vary between lengths: summary wording varies, its cap does not. */
const FLAT_TOLERANCE = 0.1;

interface Point {
  length: number;
  /** Tokens per part of the prompt (the turn's contextTrace, src/memory/context-budget.ts). */
  parts: Record<string, number>;
  promptTokens: number;
  newEmailTokens: number;
  transcriptTokens: number;
  overBudget: boolean;
}

export async function runContextSize(ctx: PhaseContext): Promise<PhaseResult> {
  const longest = LENGTHS.at(-1)!;
  const thread = await generateThread({ seed: ctx.seed + 101, length: longest, earlyReferences: EARLY_REFERENCES });
  const h = await openHarness(ctx, {}, { workers: false });
  h.llm.setFallback(realisticTurnModel());
  const { runtime } = h;
  const base = runtime.turnDeps();
  const { limits } = base.settings;
  const system = buildTurnSystemPrompt({
    supportName: base.settings.supportName,
    supportAddress: base.settings.supportAddress,
    withheldReason: null,
    limits,
  });
  const systemTokens = countTokens(system);

  const points: Point[] = [];
  const texts: string[] = [];
  const prompts: number[] = [];
  let threadId: string | null = null;
  let survivalPrompt = '';
  let survivalEmail = '';
  const started = performance.now();
  for (const mail of thread) {
    const now = new Date(mail.date.getTime() + 60_000);
    const ingested = await ingestRawMessage(
      runtime.ingestDeps({ logger: silentLogger, pipeline: null }),
      mail.raw,
      { kind: 'imap', folder: 'INBOX', uid: mail.index + 1 },
      { receivedAt: new Date(mail.date.getTime() + 30_000), now },
    );
    if (ingested.threadId === null || (threadId !== null && ingested.threadId !== threadId)) {
      throw new Error(
        `message ${mail.position} did not join the thread (${ingested.threadId ?? 'no thread'}, ${ingested.skipReason ?? 'not skipped'})`,
      );
    }
    threadId = ingested.threadId;
    texts.push(ingested.text);
    // The worker's clock, moved along with the thread, so the turn sees the thread as it would live.
    const outcome = await handleThreadTurn({ ...base, now: () => now }, threadId);
    if (outcome.kind !== 'drafted') throw new Error(`turn ${mail.position} ended ${outcome.kind}`);
    prompts.push(outcome.promptTokens);
    if (mail.position === SURVIVAL_AT) {
      survivalPrompt = (await runtime.db.turn.findUniqueOrThrow({ where: { id: outcome.turnId }, select: { prompt: true } })).prompt ?? '';
      survivalEmail = ingested.text;
    }
    if ((LENGTHS as readonly number[]).includes(mail.position)) {
      const turn = await runtime.db.turn.findUniqueOrThrow({ where: { id: outcome.turnId }, select: { contextTrace: true } });
      points.push({
        length: mail.position,
        parts: partsOf(turn.contextTrace),
        promptTokens: outcome.promptTokens,
        newEmailTokens: countTokens(truncateToTokens(ingested.text, limits.messageTokenCap)),
        transcriptTokens: systemTokens + countTokens(texts.join('\n\n')),
        overBudget: outcome.promptTokens > limits.promptTokenBudget,
      });
    }
  }
  const seconds = (performance.now() - started) / 1000;
  ctx.log(`${longest} messages ingested and answered in ${seconds.toFixed(1)} s`);
  const finalThread = await runtime.db.thread.findUniqueOrThrow({ where: { id: threadId! } });

  const withoutNewMail = (p: Point) =>
    p.parts['newMail'] !== undefined
      ? p.promptTokens - p.parts['newMail'] - (p.parts['attachments'] ?? 0)
      : p.promptTokens - p.newEmailTokens;
  const figures: Figure[] = points.map((p) =>
    figure({
      name: `2. context tokens at ${p.length} message${p.length === 1 ? '' : 's'}`,
      value: p.promptTokens,
      unit: 'tokens',
      baseline: p.transcriptTokens,
      target: p.length === longest ? `<= ${TARGET_RATIO_AT_200 * 100}% of transcript` : NO_TARGET,
      met: p.length === longest ? p.promptTokens / p.transcriptTokens <= TARGET_RATIO_AT_200 : null,
      notes: `new email ${p.newEmailTokens} tokens (as the turn put it, with markers and files: ${(p.parts['newMail'] ?? 0) + (p.parts['attachments'] ?? 0)}); context without it ${withoutNewMail(p)} tokens; by part: ${Object.entries(
        p.parts,
      )
        .map(([part, tokens]) => `${part} ${tokens}`)
        .join(', ')}`,
    }),
  );
  // "The same at every length, give or take the new message": what surrounds the new email must not
  // grow. The new mail is the turn's `newMail` part (the email, its markers, files only named) and
  // its `attachments` part (its files' text): what is left is instructions, profile, notes, pinned
  // items, buffer, knowledge and recall. (Before the parts were recorded: the prompt less the
  // email's text.)
  const overhead = points.map((p) => ({ length: p.length, tokens: withoutNewMail(p) }));
  const reference = overhead.find((o) => o.length === 10) ?? overhead[0]!;
  const largest = overhead.reduce((a, b) => (b.tokens > a.tokens ? b : a));
  figures.push(
    figure({
      name: '2. context without the new email, largest vs 10 messages',
      value: largest.tokens,
      unit: 'tokens',
      baseline: reference.tokens,
      target: `<= ${100 + FLAT_TOLERANCE * 100}% of the 10-message context (flat)`,
      met: largest.tokens <= reference.tokens * (1 + FLAT_TOLERANCE),
      notes: `without the new mail = the prompt less the turn's newMail and attachments parts; the email's text alone: ${overheadText(points)}; largest at ${largest.length} messages; by length: ${overhead.map((o) => `${o.length}: ${o.tokens}`).join(', ')}; length 1 has no summary or open items yet, so it is smaller; every prompt of the ${longest} turns: min ${Math.min(...prompts)}, max ${Math.max(...prompts)} tokens (budget ${limits.promptTokenBudget})`,
    }),
  );
  // Working memory: identifiers the customer named in messages 1-5 (and not in the subject or the
  // new email) that the prompt still carries at message 150, and the summary rewrites it cost.
  const subject = finalThread.subject;
  const early = [...new Set(texts.slice(0, 5).flatMap((t) => identifiersOf(t)))].filter(
    (id) => !subject.includes(id) && !survivalEmail.includes(id),
  );
  const surviving = early.filter((id) => survivalPrompt.includes(id));
  const rewrites = h.llm.requests.filter((r) => r.schemaName === 'summary_compression').length;
  const turns = h.llm.requests.filter((r) => r.schemaName === 'message_turn').length;
  figures.push(
    figure({
      name: `2. early identifiers still in the prompt at message ${SURVIVAL_AT}`,
      value: surviving.length,
      unit: 'identifiers',
      baseline: early.length,
      target: 'all of those stated in messages 1-5',
      met: early.length > 0 ? surviving.length === early.length : null,
      notes: `stated in messages 1-5 and not in the subject or the new email: ${early.join(', ') || 'none'}; pinned when the thread ended: ${JSON.stringify(finalThread.pinnedItems)}`,
    }),
    figure({
      name: '2. extra summary-rewrite calls per turn',
      value: round(rewrites / Math.max(1, turns), 3),
      unit: 'calls/turn',
      baseline: null,
      target: NO_TARGET,
      met: null,
      notes: `${rewrites} summary_compression calls over ${turns} message_turn calls (SUMMARY_TOKEN_CAP ${limits.summaryTokenCap})`,
    }),
  );
  return {
    figures,
    inputs: {
      'context-size': {
        method:
          'real turn path: ingestRawMessage, then handleThreadTurn with runtime.turnDeps() (clock moved with the thread) against the scripted LLM server with bench/scripted-model.ts (growing summaries and open items)',
        transcript:
          'system prompt + every customer message’s extracted (quote-stripped) text joined by blank lines; the agent’s own replies are not counted, which makes the baseline smaller and the ratio conservative',
        tokenizer: 'gpt-tokenizer o200k (src/memory/tokens.ts)',
        limits,
        thread: { seed: ctx.seed + 101, ...describeCorpus(thread) },
        points: points.map((p) => ({ ...p, ratio: round(p.promptTokens / p.transcriptTokens, 4) })),
        finalSummaryTokens: countTokens(finalThread.summary),
        seconds: round(seconds, 1),
      },
    },
  };
}

/** The part sizes a turn recorded (its contextTrace's `parts`), as tokens per part. */
function partsOf(trace: unknown): Record<string, number> {
  const parts = (trace as { parts?: Record<string, { tokens: number }> } | null)?.parts ?? {};
  return Object.fromEntries(Object.entries(parts).map(([part, { tokens }]) => [part, tokens]));
}

/** The flatness figure as it was measured before the parts were recorded: the prompt less the email's text. */
function overheadText(points: readonly Point[]): string {
  return points.map((p) => `${p.length}: ${p.promptTokens - p.newEmailTokens}`).join(', ');
}
