/**
 * A stand-in for the LLM that answers like a diligent model, instantly: it reads the prompt the
 * agent sent, writes a reply of ordinary length, and returns thread notes that grow with every
 * turn (the summary gains a sentence about the new email, open items pile up), so the product's
 * own caps and compression are what keep the context small. Deterministic: the answer is a pure
 * function of the prompt. `withLatency` makes it take a fixed time to answer.
 */
import type { Responder } from '../test/support/scripted-llm-server.ts';

function userPrompt(messages: Array<{ role: string; content?: unknown }>): string {
  const content = messages.find((m) => m.role === 'user')?.content;
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
}

function between(text: string, start: RegExp, end: RegExp): string {
  const from = text.search(start);
  if (from < 0) return '';
  const rest = text.slice(from).replace(start, '');
  const to = rest.search(end);
  return (to < 0 ? rest : rest.slice(0, to)).trim();
}

function firstSentences(text: string, words: number): string {
  const body = text
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^(hello|hi|dear|good morning)\b/i.test(line.trim()))
    .join(' ');
  return body
    .split(/\s+/)
    .slice(0, words)
    .join(' ')
    .replace(/[.,;:!?]*$/, '');
}

// Identifier-shaped tokens a diligent model would pin: "#48213", "INV-5120", "order 48213".
const IDENTIFIER = /#\d{3,12}\b|\b[A-Z]{2,6}-\d{3,12}\b|\b(?:order|invoice|ticket|account) (\d{3,12})\b/gi;

/** The identifiers a text names, at most `max`, in order. */
export function identifiersOf(text: string, max = 10): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(IDENTIFIER)) {
    found.add(m[1] ?? m[0]);
    if (found.size >= max) break;
  }
  return [...found];
}

/**
 * The summary rewrite a diligent model returns when asked (`summary_compression`): the pinned
 * items named first, then the latest two sentences of the notes. Far under any cap.
 */
function compressionAnswer(prompt: string) {
  const pinned = between(prompt, /^PINNED ITEMS:\n/m, /\nOPEN ITEMS:/)
    .split('\n')
    .map((l) => l.replace(/^- /, '').trim())
    .filter((l) => l && l !== '(none)');
  const summary = prompt.split(/^SUMMARY:\n/m)[1] ?? '';
  const latest = summary
    .split(/(?<=\.)\s+/)
    .slice(-2)
    .join(' ');
  return { kind: 'json' as const, content: { summary: `${pinned.length ? `Key references: ${pinned.join(', ')}. ` : ''}${latest}` } };
}

export function realisticTurnModel(): Responder {
  return (request) => {
    const prompt = userPrompt(request.body.messages);
    if (request.body.response_format?.json_schema?.name === 'summary_compression') return compressionAnswer(prompt);
    const previous = between(prompt, /^summary: /m, /\nopen items:/);
    const items = between(prompt, /^open items:\n/m, /\ncurrent intent:/)
      .split('\n')
      .map((l) => l.replace(/^- /, '').trim())
      .filter((l) => l && l !== '(none)');
    const subject = between(prompt, /^subject: /m, /\n/);
    const blocks = prompt.split(/<<<email [0-9a-f]+ [^\n]*>>>\n/);
    const latest = (blocks.at(-1) ?? '').split(/\n<<<end email/)[0] ?? '';
    const gist = firstSentences(latest, 28);
    const turn = items.length + 1;
    const summary = `${previous && previous !== '(new thread)' ? `${previous} ` : ''}The customer wrote again about "${subject}": ${gist}. Support acknowledged it and asked for the account details needed to check.`;
    const reply = [
      'Hello,',
      '',
      `Thank you for your message about "${subject}". I have read through what you describe and I understand that ${firstSentences(latest, 16).toLowerCase()}.`,
      'I have checked the notes on your account and passed the details to the team that handles this kind of request. They will look at it today and I will write again as soon as I hear back from them.',
      'If anything changes on your side in the meantime, just reply to this email and it will reach us directly.',
      '',
      'Best regards,',
      'Acme Support',
    ].join('\n');
    return {
      kind: 'json',
      content: {
        reply: { body: reply, needsHuman: false },
        summary,
        openItems: [...items, `follow up (${turn}): ${firstSentences(latest, 10)}`],
        currentIntent: 'follow_up_on_request',
        tags: ['support', subject.split(' ')[0]?.toLowerCase() ?? 'request'],
        // Pins what the new email names that is not pinned yet; never repeats what is.
        pin: identifiersOf(latest, 3).filter((id) => !pinnedIn(prompt).includes(id)),
        unpin: [],
        resolved: false,
      },
    };
  };
}

function pinnedIn(prompt: string): string[] {
  return between(prompt, /^pinned items[^\n]*\n/m, /\nopen items:/)
    .split('\n')
    .map((l) => l.replace(/^- /, '').trim())
    .filter((l) => l && l !== '(none)');
}

/**
 * The same answers, each sent `ms` after the request arrived: a model that takes that long to
 * answer. The answer is computed at once and the scripted server's own timer holds it back
 * (`{ kind: 'delay' }`), so waiting costs no CPU.
 */
export function withLatency(responder: Responder, ms: number): Responder {
  return async (request, index) => ({ kind: 'delay', ms, then: await responder(request, index) });
}
