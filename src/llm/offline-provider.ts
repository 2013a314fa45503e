/**
 * The offline provider, used when no LLM is configured. It is NOT a language model: it is a small
 * set of deterministic rules that keep the whole pipeline working without a network. Replies are
 * short acknowledgements in the customer's language (templates for the languages of
 * `fixtures/emails/`, src/llm/offline-text.ts) that restate the open items: the customer's
 * questions and requests, never salutations or statements; a thread the customer declares
 * settled gets a short closing reply. The summary is extractive (the first content sentences of
 * each email, salutations and sign-offs left out); identifiers it recognises are pinned; facts
 * are found by explicit phrase patterns ("please only call me in the evenings"), quoted literally.
 */
import { kbQueryTerms, searchableText, termCoverage } from '../memory/knowledge.ts';
import { compressSummary, MAX_PINNED_ITEMS } from '../memory/thread-state.ts';
import { countTokens } from '../memory/tokens.ts';
import type { MessageTurn, SummaryCompression, ThreadPromotion } from './contracts.ts';
import { intentOf } from './offline-intents.ts';
import { offlineThreadPromotion } from './offline-promotion.ts';
import { withSensitiveNotice } from './sensitive-notice.ts';
import { contentSentences, declaresSettled, detectLanguage, identifiersIn, offlineReply, requestsIn } from './offline-text.ts';
import type { CompressionRequest, LlmOutcome, LlmProvider, PromptText, PromotionRequest, TurnRequest } from './provider.ts';

// The policy file's tag vocabulary (config/promotion-policy.json `tags`) for each intent.
const INTENT_TAGS: Record<string, string> = {
  refund_request: 'billing',
  billing_question: 'billing',
  cancellation: 'plan',
  plan_change: 'plan',
  shipping_status: 'shipping',
  account_access: 'account',
  bug_report: 'bug',
  feature_request: 'feature_request',
};
const NEEDS_HUMAN_INTENTS = new Set(['refund_request', 'cancellation', 'plan_change']);
const LEGAL = /\b(lawyer|attorney|legal action|chargeback|court|gdpr|data protection)\b/i;
function firstName(name: string | null): string | null {
  const first = name?.trim().split(/\s+/)[0];
  return first && /^\p{L}[\p{L}'’-]{1,30}$/u.test(first) ? first : null;
}

function usage(prompt: PromptText, value: unknown): { promptTokens: number; completionTokens: number } {
  return { promptTokens: countTokens(prompt.system) + countTokens(prompt.user), completionTokens: countTokens(JSON.stringify(value)) };
}

/** A passage answers the question when at least this share of the question's terms occur in it. */
const ANSWER_COVERAGE = 0.6;
const ANSWER_LINES = 5;

// A name in the question: a capitalised word (or an acronym) that does not start its sentence.
const NAME_IN_SENTENCE = /(?<=[\p{L}\p{N},;:)][ \t]+)\p{Lu}[\p{L}\p{N}]{2,30}(?![\p{L}\p{N}])/gu;

/**
 * The names a question asks about (products, platforms, places: "Windows", "Slack", "SSO") must
 * occur in the passage as names too: "maintenance windows" does not answer "Is there a Windows
 * app?". Case-sensitive, whole words, a plural "s" either side allowed.
 */
function namesAnswered(questions: readonly string[], passage: string): boolean {
  const words = new Set(passage.slice(0, 20_000).match(/[\p{L}\p{N}]+/gu) ?? []);
  for (const question of questions) {
    for (const match of question.matchAll(NAME_IN_SENTENCE)) {
      const name = match[0];
      if (!words.has(name) && !words.has(`${name}s`) && !(name.endsWith('s') && words.has(name.slice(0, -1)))) return false;
    }
  }
  return true;
}

/**
 * When the best knowledge passage covers the newest email's question well, its first lines (the
 * steps, the policy) quoted as they are, each cited; otherwise null and the reply acknowledges.
 */
function extractiveAnswer(request: TurnRequest): { lines: string[]; citations: MessageTurn['citations'] } | null {
  const top = request.knowledge?.[0];
  const latest = request.emails.at(-1);
  if (!top || !latest) return null;
  // The question, not the whole email: its subject and the sentences that ask something (a
  // greeting, a signature or a story around the question would dilute the coverage).
  const asked = requestsIn(contentSentences(latest.text.slice(0, 2_000)));
  const terms = kbQueryTerms(`${request.thread.subject}\n${asked.length > 0 ? asked.join(' ') : latest.text.slice(0, 300)}`);
  if (terms.length < 2 || termCoverage(terms, searchableText(`${top.titlePath}\n${top.text}`)) < ANSWER_COVERAGE) return null;
  if (!namesAnswered(asked.length > 0 ? asked : [latest.text.slice(0, 300)], `${top.titlePath}\n${top.text}`)) return null;
  const lines = top.text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && l.length <= 400)
    .slice(0, ANSWER_LINES);
  if (lines.length === 0) return null;
  return { lines, citations: lines.map((line) => ({ sentence: line, source: `kb:${top.id}`, quote: line })) };
}

export class OfflineProvider implements LlmProvider {
  readonly name = 'offline' as const;
  readonly model = 'offline-rules-v1';

  async messageTurn(request: TurnRequest): Promise<LlmOutcome<MessageTurn>> {
    const latest = request.emails.at(-1);
    const allText = request.emails.map((e) => e.text).join('\n');
    const intent = intentOf(`${request.thread.subject}\n${latest?.text ?? ''}`);
    const content = request.emails.map((e) => contentSentences(e.text));
    const resolved = declaresSettled(latest?.text ?? '');
    const asked = content.flatMap(requestsIn).map((s) => s.slice(0, 160));
    const openItems = resolved ? [] : [...new Set([...request.thread.openItems, ...asked])].slice(-8);
    const needsHuman = !resolved && (NEEDS_HUMAN_INTENTS.has(intent) || LEGAL.test(allText));
    const senders = request.emails.map((e) => e.fromAddress);
    const pin = identifiersIn(allText, MAX_PINNED_ITEMS, [...senders, ...request.thread.pinnedItems]);

    const newest = request.emails
      .map((e, i) => `${e.date.toISOString().slice(0, 10)}: ${(content[i] ?? []).slice(0, 2).join(' ')}`)
      .filter((line) => !line.endsWith(': '))
      .join(' ');
    const pinned = [...request.thread.pinnedItems, ...pin];
    const summary = compressSummary(`${request.thread.summary} ${newest}`.trim(), request.summaryTokenCap, pinned);

    const answer = resolved ? null : extractiveAnswer(request);
    const reply = offlineReply({
      answer: answer?.lines ?? null,
      language: detectLanguage(latest?.text ?? request.thread.subject),
      name: firstName(latest?.fromName ?? request.profile?.name ?? null),
      settled: resolved,
      openItems,
      needsHuman,
      supportName: request.supportName,
    });
    // Card details or a password in the mail (masked at ingestion): the reply says not to send them.
    const body = withSensitiveNotice(reply, request.emails);

    const value: MessageTurn = {
      reply: { body, needsHuman },
      summary,
      openItems,
      currentIntent: intent,
      tags: [...new Set([...(INTENT_TAGS[intent] ? [INTENT_TAGS[intent]] : []), intent, ...(needsHuman ? ['needs_human'] : [])])],
      pin,
      unpin: [],
      resolved,
      citations: answer?.citations ?? [],
    };
    const { promptTokens, completionTokens } = usage(request.prompt, value);
    return { ok: true, value, calls: [{ purpose: 'message_turn', promptTokens, completionTokens, ok: true }] };
  }

  async threadPromotion(request: PromotionRequest): Promise<LlmOutcome<ThreadPromotion>> {
    const value = offlineThreadPromotion(request);
    const { promptTokens, completionTokens } = usage(request.prompt, value);
    return { ok: true, value, calls: [{ purpose: 'thread_promotion', promptTokens, completionTokens, ok: true }] };
  }

  /** Rules cannot rewrite: the recency cut that keeps sentences naming a pinned item. */
  async compressSummary(request: CompressionRequest): Promise<LlmOutcome<SummaryCompression>> {
    const value = { summary: compressSummary(request.summary, request.capTokens, request.pinned) };
    const { promptTokens, completionTokens } = usage(request.prompt, value);
    return { ok: true, value, calls: [{ purpose: 'summary_compression', promptTokens, completionTokens, ok: true }] };
  }
}
