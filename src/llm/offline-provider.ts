/**
 * The offline provider, used when no LLM is configured. It is NOT a language model: it is a small
 * set of deterministic rules that keep the whole pipeline working without a network. Replies are
 * short English acknowledgements that restate the open items; the summary is extractive (the
 * first sentences of each email); facts are found by explicit phrase patterns ("please only call
 * me in the evenings"), quoted literally from the customer's text.
 */
import { compressSummary, snakeCase } from '../memory/thread-state.ts';
import { countTokens } from '../memory/tokens.ts';
import type { FactCategory } from '../memory/types.ts';
import type { MessageTurn, PromotedFact, ThreadPromotion } from './contracts.ts';
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
    const body = [
      greetingName ? `Hello ${greetingName},` : 'Hello,',
      '',
      resolved
        ? "Thank you for letting us know. We're glad it is sorted, and we will close this request. Just reply if anything else comes up."
        : 'Thank you for your email. We have received it and will get back to you shortly.',
      ...(openItems.length > 0 && !resolved ? ['', 'We are tracking:', ...openItems.map((i) => `- ${i}`)] : []),
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
    };
    const { promptTokens, completionTokens } = usage(request.prompt, value);
    return { ok: true, value, calls: [{ purpose: 'message_turn', promptTokens, completionTokens, ok: true }] };
  }

  async threadPromotion(request: PromotionRequest): Promise<LlmOutcome<ThreadPromotion>> {
    const facts = request.messages.flatMap((m) => extractFacts(m.messageId, m.text));
    const commitments = request.agentReplies.flatMap((reply) =>
      [...reply.matchAll(COMMITMENT)].map((match) => ({ text: match[0].trim().replace(/[.!]$/, ''), due: null })),
    );
    const topic =
      request.thread.subject.replace(/^\s*(re|fwd?|aw|wg|sv|tr)\s*:\s*/gi, '').trim() || request.thread.currentIntent.replace(/_/g, ' ');
    const value: ThreadPromotion = { topic: topic.slice(0, 80) || 'support request', facts, commitments };
    const { promptTokens, completionTokens } = usage(request.prompt, value);
    return { ok: true, value, calls: [{ purpose: 'thread_promotion', promptTokens, completionTokens, ok: true }] };
  }
}

const COMMITMENT =
  /\b(?:we(?:'ll| will)|I(?:'ll| will))\s+(?:refund|send|ship|call|credit|replace|fix|update|issue)\b[^.!?\n]{3,100}[.!]?/gi;

interface FactRule {
  pattern: RegExp;
  key: string;
  category: FactCategory;
  confidence: number;
  value: (match: RegExpMatchArray) => string;
}

const FACT_RULES: FactRule[] = [
  {
    pattern:
      /\b(?:please\s+)?(?:only\s+)?(?:call|phone|ring|contact|reach)\s+me\s+(?:only\s+)?(?:in\s+the\s+|during\s+the\s+|on\s+|at\s+)?(mornings?|afternoons?|evenings?|weekends?|weekdays?|nights?)\b/i,
    key: 'preferred_contact_time',
    category: 'preference',
    confidence: 0.9,
    value: (m) => normalisePeriod(m[1] ?? ''),
  },
  {
    pattern:
      /\b(?:please\s+)?(?:only\s+)?(?:email|e-mail|write to)\s+me\b(?:\s+(?:rather than|instead of)\s+(?:calling|phoning|call|phone))?/i,
    key: 'preferred_contact_channel',
    category: 'preference',
    confidence: 0.85,
    value: () => 'email',
  },
  {
    pattern: /\bI\s+prefer\s+(email|e-mail|phone calls?|calls|chat|sms|text messages)\b/i,
    key: 'preferred_contact_channel',
    category: 'preference',
    confidence: 0.9,
    value: (m) => (/mail/i.test(m[1] ?? '') ? 'email' : /sms|text/i.test(m[1] ?? '') ? 'sms' : /chat/i.test(m[1] ?? '') ? 'chat' : 'phone'),
  },
  {
    pattern:
      /\b(?:please\s+)?(?:reply|answer|write)\s+(?:to\s+me\s+)?in\s+(English|German|French|Spanish|Dutch|Italian|Portuguese|Japanese|Chinese|Russian|Swedish|Polish)\b/i,
    key: 'preferred_language',
    category: 'preference',
    confidence: 0.9,
    value: (m) => (m[1] ?? '').toLowerCase(),
  },
  {
    pattern: /\b[Mm]y name is\s+(\p{Lu}[\p{L}'’-]+(?:\s+\p{Lu}[\p{L}'’-]+)?)/u,
    key: 'name',
    category: 'identity',
    confidence: 0.9,
    value: (m) => m[1] ?? '',
  },
  {
    pattern: /\b(?:my (?:phone|mobile|cell)(?: number)? is|call me (?:at|on))\s+(\+?\d[\d ()./-]{6,}\d)/i,
    key: 'phone',
    category: 'identity',
    confidence: 0.85,
    value: (m) => (m[1] ?? '').replace(/\s+/g, ' '),
  },
  {
    pattern: /\bI\s+work\s+(?:at|for)\s+(\p{Lu}[\p{L}\d&.'-]*(?:\s+\p{Lu}[\p{L}\d&.'-]*){0,3})/u,
    key: 'company',
    category: 'identity',
    confidence: 0.8,
    value: (m) => m[1] ?? '',
  },
  {
    pattern: /\b(?:I(?:'m| am)|we(?:'re| are))\s+on\s+(?:the\s+)?(\w+)\s+(?:plan|tier)\b/i,
    key: 'account_tier',
    category: 'account',
    confidence: 0.8,
    value: (m) => (m[1] ?? '').toLowerCase(),
  },
  {
    pattern: /\bupgrade\s+(?:me|us|my account|our account)\s+to\s+(?:the\s+)?(\w+)/i,
    key: 'account_tier',
    category: 'account',
    confidence: 0.9,
    value: (m) => (m[1] ?? '').toLowerCase(),
  },
  {
    pattern: /\bI(?:'m| am)\s+(?:currently\s+)?(?:troubleshooting|trying to fix|dealing with|investigating)\s+([^.!?\n]{3,60})/i,
    key: 'current_issue',
    category: 'situation',
    confidence: 0.7,
    value: (m) => (m[1] ?? '').trim(),
  },
  {
    pattern:
      /\b(?:I(?:'m| am)\s+(?:so\s+|really\s+|very\s+)?(?:frustrated|angry|furious|annoyed|disappointed|fed up)|this is (?:unacceptable|ridiculous))\b/i,
    key: 'sentiment',
    category: 'sentiment',
    confidence: 0.8,
    value: (m) => m[0].toLowerCase(),
  },
];

function normalisePeriod(period: string): string {
  const lower = period.toLowerCase();
  return lower.endsWith('s') ? lower : `${lower}s`;
}

function extractFacts(messageId: string, text: string): PromotedFact[] {
  const facts: PromotedFact[] = [];
  for (const rule of FACT_RULES) {
    const match = text.match(rule.pattern);
    if (!match || match.index === undefined) continue;
    const value = rule.value(match).trim();
    if (!value) continue;
    facts.push({
      key: snakeCase(rule.key),
      value,
      category: rule.category,
      confidence: rule.confidence,
      explicit: true,
      evidence: match[0],
      sourceMessageId: messageId,
    });
  }
  return facts;
}
