/**
 * The offline provider, used when no LLM is configured. It is NOT a language model: it is a small
 * set of deterministic rules that keep the whole pipeline working without a network. Replies are
 * short English acknowledgements that restate the open items; the summary is extractive (the
 * first sentences of each email); facts are found by explicit phrase patterns ("please only call
 * me in the evenings"), quoted literally from the customer's text.
 */
import { kbQueryTerms, searchableText, termCoverage } from '../memory/knowledge.ts';
import { compressSummary } from '../memory/thread-state.ts';
import { countTokens } from '../memory/tokens.ts';
import type { MessageTurn, ThreadPromotion } from './contracts.ts';
import { offlineThreadPromotion } from './offline-promotion.ts';
import type { LlmOutcome, LlmProvider, PromptText, PromotionRequest, TurnRequest } from './provider.ts';

const INTENTS: Array<[RegExp, string]> = [
  [/\brefund|money back|reimburs/i, 'refund_request'],
  [/\bcancel/i, 'cancellation'],
  [/\bupgrade|downgrade|\bplan\b|\btier\b|enterprise/i, 'plan_change'],
  [/invoice|billing|bill\b|charged|charge\b|payment|receipt/i, 'billing_question'],
  [/ship|deliver|tracking|parcel|package|courier/i, 'shipping_status'],
  [/password|log ?in|sign ?in|2fa|two-factor|locked out/i, 'account_access'],
  [/\bbug\b|error|crash|broken|does(?:n't| not) work|not working|fails?\b/i, 'bug_report'],
  [/feature|would be (?:great|nice)|could you add|suggest/i, 'feature_request'],
];
const NEEDS_HUMAN_INTENTS = new Set(['refund_request', 'cancellation', 'plan_change']);
const LEGAL = /\b(lawyer|attorney|legal action|chargeback|court|gdpr|data protection)\b/i;
const RESOLVED =
  /\b(that (?:fixed|solved|did) it|(?:it|everything) works now|works fine now|problem (?:is )?solved|issue (?:is )?resolved|all (?:good|sorted) now|you can close|no further (?:help|action)|all set now)\b/i;
const REQUEST = /\?|\b(please|could you|can you|would you|need|want|how do i|how can i|i'd like|i would like)\b/i;
// "Please only call me in the evenings" is a preference for the profile, not an open item.
const PREFERENCE = /\b(call|phone|ring|contact|reach|email|e-mail|write to|reply to|answer) me\b|\bI prefer\b/i;

function sentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?。！？])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function firstName(name: string | null): string | null {
  const first = name?.trim().split(/\s+/)[0];
  return first && /^\p{L}[\p{L}'’-]{1,30}$/u.test(first) ? first : null;
}

function intentOf(text: string): string {
  return INTENTS.find(([pattern]) => pattern.test(text))?.[1] ?? 'general_inquiry';
}

function usage(prompt: PromptText, value: unknown): { promptTokens: number; completionTokens: number } {
  return { promptTokens: countTokens(prompt.system) + countTokens(prompt.user), completionTokens: countTokens(JSON.stringify(value)) };
}

/** A passage answers the question when at least this share of the question's terms occur in it. */
const ANSWER_COVERAGE = 0.6;
const ANSWER_LINES = 5;

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
  const asked = sentences(latest.text.slice(0, 2_000)).filter((sentence) => REQUEST.test(sentence));
  const terms = kbQueryTerms(`${request.thread.subject}\n${asked.length > 0 ? asked.join(' ') : latest.text.slice(0, 300)}`);
  if (terms.length < 2 || termCoverage(terms, searchableText(`${top.titlePath}\n${top.text}`)) < ANSWER_COVERAGE) return null;
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
    const resolved = RESOLVED.test(latest?.text ?? '');
    const asked = request.emails
      .flatMap((e) => sentences(e.text).filter((s) => REQUEST.test(s) && !PREFERENCE.test(s)))
      .map((s) => s.slice(0, 160));
    const openItems = resolved ? [] : [...new Set([...request.thread.openItems, ...asked])].slice(-8);
    const needsHuman = !resolved && (NEEDS_HUMAN_INTENTS.has(intent) || LEGAL.test(allText));

    const newest = request.emails.map((e) => `${e.date.toISOString().slice(0, 10)}: ${sentences(e.text).slice(0, 2).join(' ')}`).join(' ');
    const summary = compressSummary(`${request.thread.summary} ${newest}`.trim(), request.summaryTokenCap);

    const greetingName = firstName(latest?.fromName ?? request.profile?.name ?? null);
    const answer = resolved ? null : extractiveAnswer(request);
    const body = [
      greetingName ? `Hello ${greetingName},` : 'Hello,',
      '',
      resolved
        ? "Thank you for letting us know. We're glad it is sorted, and we will close this request. Just reply if anything else comes up."
        : answer
          ? 'Thank you for your email. This is what our help center says about it:'
          : 'Thank you for your email. We have received it and will get back to you shortly.',
      ...(answer ? ['', ...answer.lines, '', 'If that does not answer your question, just reply and a colleague will help.'] : []),
      ...(openItems.length > 0 && !resolved && !answer ? ['', 'We are tracking:', ...openItems.map((i) => `- ${i}`)] : []),
      ...(needsHuman ? ['', 'A member of our team will follow up on this personally.'] : []),
      '',
      'Best regards,',
      request.supportName,
    ].join('\n');

    const value: MessageTurn = {
      reply: { body, needsHuman },
      summary,
      openItems,
      currentIntent: intent,
      tags: [...new Set([intent, ...(needsHuman ? ['needs_human'] : [])])],
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
}
