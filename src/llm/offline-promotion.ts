/**
 * The offline provider's promotion pass (see src/llm/offline-provider.ts): facts by explicit phrase
 * patterns quoted literally from the customer's messages, promises by phrase patterns in the
 * team's replies (their due date as written, which the product resolves), and a promise closed
 * when a later customer message confirms it in plain words and shares a word with it. Rules, not
 * a language model; the written policy still decides every fact.
 */
import { snakeCase } from '../memory/thread-state.ts';
import type { PromotedFact, ThreadPromotion } from './contracts.ts';
import { type FactRule, MORE_FACT_RULES, signatureName } from './offline-facts.ts';
import { isSignOff } from './offline-text.ts';
import type { PromotionRequest } from './provider.ts';

export function offlineThreadPromotion(request: PromotionRequest): ThreadPromotion {
  const facts = request.messages.flatMap((m) => extractFacts(m.messageId, m.text));
  const commitments = request.replies.flatMap((reply) =>
    [...reply.text.matchAll(COMMITMENT)].map((match) => {
      const text = match[0].trim().replace(/[.!]$/, '');
      return { text, due: DUE.exec(text)?.[1]?.trim() ?? null, sourceMessageId: reply.messageId };
    }),
  );
  const commitmentUpdates = request.messages.flatMap((m) => confirmations(m, request.commitments));
  const topic =
    request.thread.subject.replace(/^\s*(re|fwd?|aw|wg|sv|tr)\s*:\s*/gi, '').trim() || request.thread.currentIntent.replace(/_/g, ' ');
  return { topic: topic.slice(0, 80) || 'support request', facts, commitments, commitmentUpdates };
}

const COMMITMENT =
  /\b(?:we(?:'ll| will)|I(?:'ll| will))\s+(?:refund|send|ship|call|credit|replace|fix|update|issue|reimburse|deliver|check|get back)\b[^.!?\n]{3,120}[.!]?/gi;
/** The due date inside a promise, as written: "by Friday", "before 15 November", "within 3 business days". */
const DUE = /\b((?:by|before|until|no later than|on|within)\s+[^,;.!?]{2,40})/i;

/**
 * A customer saying a promise was kept, in the fixtures' languages. The sentence around the
 * words is bounded (200 characters either side): an unbounded run would rescan a long text
 * without sentence ends from every position (quadratic time).
 */
const KEPT =
  /[^.!?\n]{0,200}\b(?:arrived|received|came through|has been (?:refunded|credited|fixed|replaced|delivered)|got (?:it|the \w+)|is (?:fixed|working)|ist (?:angekommen|eingegangen)|erhalten|bien reçu|est arrivée?|reçu le|ya lleg[óo]|recib[íi]|ontvangen|is aangekomen|arrivato|ricevuto|recebi|chegou)\b[^.!?\n]{0,200}[.!?]?/giu;
const STOP = new Set([
  'will',
  'your',
  'with',
  'that',
  'this',
  'from',
  'have',
  'been',
  'the',
  'and',
  'for',
  'you',
  'our',
  'friday',
  'monday',
]);

function contentWords(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/\p{L}{4,}/gu) ?? []).filter((w) => !STOP.has(w)));
}

function confirmations(
  message: { messageId: string; text: string },
  open: PromotionRequest['commitments'],
): ThreadPromotion['commitmentUpdates'] {
  const updates: ThreadPromotion['commitmentUpdates'] = [];
  for (const match of message.text.matchAll(KEPT)) {
    const sentence = match[0].trim();
    const words = contentWords(sentence);
    const kept = open.find((c) =>
      [...contentWords(c.text)].some((w) => words.has(w) || [...words].some((s) => s.startsWith(w.slice(0, 5)))),
    );
    if (kept && !updates.some((u) => u.commitment === kept.id)) {
      updates.push({ commitment: kept.id, status: 'fulfilled', evidence: sentence, sourceMessageId: message.messageId });
    }
  }
  return updates;
}

const FACT_RULES: FactRule[] = [
  {
    pattern:
      /\b(?:please\s+)?(?:only\s+)?(?:call|phone|ring|contact|reach)\s+me\s+(?:only\s+)?(?:in\s+the\s+|during\s+the\s+|during\s+|on\s+|at\s+)?(mornings?|afternoons?|evenings?|weekends?|weekdays?|nights?|business hours|office hours|working hours)\b/i,
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
    // "From now on, please contact me by phone" / "reach me by text instead".
    pattern:
      /\b(?:contact|reach|call|text|email)\s+me\s+(?:only\s+)?(?:by|via|on|through)\s+(phone|telephone|e-?mail|sms|text(?: message)?s?|whatsapp|chat)\b/i,
    key: 'preferred_contact_channel',
    category: 'preference',
    confidence: 0.9,
    value: (m) => channelOf(m[1] ?? ''),
  },
  {
    pattern: /\bmy\s+new\s+(?:phone|mobile|cell)?\s*(?:number|phone)\s+is\s+(\+?\d[\d ()./-]{6,}\d)/i,
    key: 'phone',
    category: 'identity',
    confidence: 0.9,
    value: (m) => (m[1] ?? '').replace(/\s+/g, ' '),
  },
  {
    pattern: /\b(?:our|my)\s+workspace(?:\s+id)?\s+(?:is\s+)?([A-Za-z]{1,6}-?\d{2,10})\b/i,
    key: 'workspace_id',
    category: 'account',
    confidence: 0.9,
    value: (m) => m[1] ?? '',
  },
  {
    pattern: /\b(?:our|my)\s+account\s+(?:id|number|no\.?)\s+(?:is\s+)?([A-Za-z]{0,6}-?\d{3,12})\b/i,
    key: 'account_id',
    category: 'account',
    confidence: 0.9,
    value: (m) => m[1] ?? '',
  },
  {
    // Words of the name on the same line only ("I work for Northwind Traders.\n\nBest regards").
    pattern: /\bI[ \t]+work[ \t]+(?:at|for)[ \t]+(\p{Lu}[\p{L}\d&.'-]*(?:[ \t]+\p{Lu}[\p{L}\d&.'-]*){0,3})/u,
    key: 'company',
    category: 'identity',
    confidence: 0.8,
    value: (m) => (m[1] ?? '').replace(/[.'-]+$/, ''),
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
  const lower = period.toLowerCase().replace(/\s+/g, ' ');
  if (lower.endsWith('hours')) return lower;
  return lower.endsWith('s') ? lower : `${lower}s`;
}

function channelOf(word: string): string {
  const lower = word.toLowerCase();
  if (/mail/.test(lower)) return 'email';
  if (/sms|text|whatsapp/.test(lower)) return 'sms';
  if (/chat/.test(lower)) return 'chat';
  return 'phone';
}

/**
 * A quote that a length limit cut inside a word ("on all Wi") ends at the word before instead:
 * evidence is compared word by word with its message.
 */
function wholeWords(quote: string, text: string, index: number): string {
  const end = text.indexOf(quote, index) + quote.length;
  if (end < quote.length || end >= text.length || !/[\p{L}\p{N}]/u.test(text[end]!) || !/[\p{L}\p{N}]$/u.test(quote)) return quote;
  const cut = quote.replace(/\s*[^\s]*$/u, '');
  return cut.length > 0 ? cut : quote;
}

function extractFacts(messageId: string, text: string): PromotedFact[] {
  const facts: PromotedFact[] = [];
  for (const rule of [...FACT_RULES, ...MORE_FACT_RULES]) {
    const match = text.match(rule.pattern);
    if (!match || match.index === undefined) continue;
    const value = wholeWords(rule.value(match).trim(), text, match.index);
    if (!value) continue;
    facts.push({
      key: snakeCase(rule.key),
      value,
      category: rule.category,
      confidence: rule.confidence,
      explicit: true,
      evidence: wholeWords(match[0], text, match.index),
      sourceMessageId: messageId,
    });
  }
  const name = signatureName(text, isSignOff);
  if (name && !facts.some((f) => f.key === 'name')) {
    facts.push({ key: 'name', category: 'identity', explicit: true, sourceMessageId: messageId, ...name });
  }
  return facts;
}
