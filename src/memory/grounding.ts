/**
 * The grounding gate, the reply guard's second half (src/memory/reply-guard.ts reads promises and
 * amounts; this reads claims): every sentence of a draft that states a fact, a step, a number, a
 * date or a policy must rest on something the model was given. Pure, linear in its capped input.
 *
 * A claim is supported when a citation covers it (its `sentence` is the claim, or inside it, or
 * holds it) and the citation checks out: its source is one the prompt held (a knowledge passage,
 * a profile fact, a customer email) and its quote occurs in that source once both are folded
 * (case, accents, full-width forms, punctuation; as the fact-evidence check compares), and every
 * number of the claim occurs in the cited source or in what the customer and the profile said. An
 * uncited claim passes only when it restates the customer (the sentence occurs in their email or
 * the profile) or its numbers all come from there and it states no step or policy. Rules:
 * - `citation-unknown-source`: the citation names a source the prompt did not hold;
 * - `citation-not-in-source`: its quote does not occur in the cited source;
 * - `citation-not-substantive`: its quote is too slight to prove anything ("to", "the refund") or
 *   shares no word with the sentence citing it (src/memory/quote-substance.ts);
 * - `unsupported-claim`: a claim without a citation that checks out.
 */
import { quoteWeakness } from './quote-substance.ts';
import { containsFolded, foldText } from './text-fold.ts';

export type GroundingRule = 'citation-unknown-source' | 'citation-not-in-source' | 'citation-not-substantive' | 'unsupported-claim';

export interface GroundingFinding {
  rule: GroundingRule;
  /** The sentence or citation that triggered it, at most 160 characters. */
  excerpt: string;
  reason: string;
}

export interface GroundingCitation {
  sentence: string;
  source: string;
  quote: string;
}

export interface GroundingInput {
  body: string;
  citations: readonly GroundingCitation[];
  /** Knowledge passages the prompt held, by id. */
  passages: ReadonlyArray<{ id: string; titlePath: string; text: string }>;
  /** Profile facts the prompt held (empty when the profile was withheld). */
  facts: ReadonlyArray<{ key: string; value: string }>;
  /** The customer emails the prompt held. */
  messages: ReadonlyArray<{ messageId: string; text: string }>;
  /** Everything else the prompt said about this customer (thread notes): restating it is no claim. */
  notes: string;
}

export interface GroundingReview {
  findings: GroundingFinding[];
  /** Passage ids of the citations that checked out, in order of first use. */
  citedPassages: string[];
}

const MAX_BODY_CHARS = 20_000;
const MAX_FINDINGS = 10;

// Words that make a sentence a step or a policy, in the fixture languages. Digits make it a claim too.
const CLAIM_CUES =
  /\b(click|tap|select|choose|go to|navigate|open (?:the|your)|settings|menu|policy|policies|refund window|within \w+ (?:days|hours|weeks)|free of charge|included in|is required|must|steps?|klicken|gehen sie|einstellungen|richtlinie|innerhalb|cliquez|allez|paramètres|politique|dans un délai|haga clic|vaya a|configuración|ajustes|política|dentro de)\b|設定|クリック|ポリシー|点击|设置|政策/iu;
const NUMBER = /\d+(?:[.,]\d+)*/g;

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 159)}…` : flat;
}

/** Numbers as digit strings ("1,299.00" → "1299.00" and "1299"; "30." → "30"). */
function numbersIn(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.normalize('NFKC').match(NUMBER) ?? []) {
    const clean = raw.replace(/[.,](?=\d{3}(?!\d))/g, '');
    out.add(clean.replace(/,/g, '.'));
    out.add(clean.replace(/[.,]\d+$/, ''));
  }
  return out;
}

/** The reply's sentences: lines, and sentence ends within lines; greetings and blank lines dropped. */
export function replySentences(body: string): string[] {
  return body
    .slice(0, MAX_BODY_CHARS)
    .split('\n')
    .flatMap((line) => line.split(/(?<=[.!?。！？])\s+(?=\S)/))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function isClaim(sentence: string): boolean {
  return /\d/.test(sentence.normalize('NFKC')) || CLAIM_CUES.test(sentence);
}

function covers(citationSentence: string, sentence: string): boolean {
  const a = foldText(citationSentence);
  const b = foldText(sentence);
  if (!a || !b) return false;
  return a === b || containsFolded(a, b) || containsFolded(b, a);
}

const stripBrackets = (id: string) => id.trim().replace(/^<|>$/g, '');

export function checkGrounding(input: GroundingInput): GroundingReview {
  const findings: GroundingFinding[] = [];
  const add = (f: GroundingFinding) => {
    if (findings.length < MAX_FINDINGS) findings.push(f);
  };
  const passages = new Map(input.passages.map((p) => [p.id, `${p.titlePath}\n${p.text}`]));
  const facts = new Map(input.facts.map((f) => [f.key, f.value]));
  const messages = new Map(input.messages.map((m) => [stripBrackets(m.messageId), m.text]));
  const customerSaid = [...input.messages.map((m) => m.text), ...input.facts.map((f) => `${f.key} ${f.value}`), input.notes].join('\n');
  const customerFolded = foldText(customerSaid.slice(0, 200_000));
  const customerNumbers = numbersIn(customerSaid.slice(0, 200_000));

  // Each citation checked once: which source text it rests on, or why it rests on nothing.
  const valid: Array<{ sentence: string; sourceText: string; passageId: string | null }> = [];
  const citedPassages: string[] = [];
  for (const citation of input.citations.slice(0, 50)) {
    const [kind, ...rest] = citation.source.trim().split(':');
    const ref = rest.join(':').trim();
    const sourceText =
      kind === 'kb'
        ? passages.get(ref)
        : kind === 'profile'
          ? facts.get(ref)
          : kind === 'message'
            ? messages.get(stripBrackets(ref))
            : undefined;
    if (sourceText === undefined) {
      add({
        rule: 'citation-unknown-source',
        excerpt: excerpt(citation.source),
        reason: `the reply cites ${excerpt(citation.source)}, which was not in what the model was given`,
      });
      continue;
    }
    if (!containsFolded(foldText(sourceText), foldText(citation.quote))) {
      add({
        rule: 'citation-not-in-source',
        excerpt: excerpt(citation.quote),
        reason: `the quote given for "${excerpt(citation.sentence).slice(0, 80)}" does not occur in ${excerpt(citation.source)}`,
      });
      continue;
    }
    const weakness = quoteWeakness(citation.quote, sourceText, citation.sentence);
    if (weakness) {
      add({
        rule: 'citation-not-substantive',
        excerpt: excerpt(citation.quote),
        reason: `the quote given for "${excerpt(citation.sentence).slice(0, 80)}" ${weakness}`,
      });
      continue;
    }
    valid.push({ sentence: citation.sentence, sourceText, passageId: kind === 'kb' ? ref : null });
  }

  for (const sentence of replySentences(input.body)) {
    if (!isClaim(sentence)) continue;
    const support = valid.filter((c) => covers(c.sentence, sentence));
    const numbers = [...numbersIn(sentence)];
    if (support.length > 0) {
      const known = new Set([...customerNumbers, ...support.flatMap((c) => [...numbersIn(c.sourceText)])]);
      const missing = numbers.filter((n) => !known.has(n) && !known.has(n.replace(/\.\d+$/, '')));
      if (missing.length === 0) {
        for (const c of support) if (c.passageId && !citedPassages.includes(c.passageId)) citedPassages.push(c.passageId);
        continue;
      }
      add({ rule: 'unsupported-claim', excerpt: excerpt(sentence), reason: `${missing.join(', ')} is not in the cited source` });
      continue;
    }
    // Restating the customer or the profile is not a claim of ours.
    if (containsFolded(customerFolded, foldText(sentence))) continue;
    if (!CLAIM_CUES.test(sentence) && numbers.every((n) => customerNumbers.has(n))) continue;
    add({
      rule: 'unsupported-claim',
      excerpt: excerpt(sentence),
      reason: 'states a fact, step, number or policy that no citation supports',
    });
  }
  return { findings, citedPassages };
}
