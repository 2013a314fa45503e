/**
 * The reply guard's structural reading of a promise (src/memory/reply-guard.ts): instead of
 * listing every way to say "refunded", a sentence is read as who did what to which thing. It
 * promises when a value object (a charge, fee, refund, credit, balance, plan, seat, hold, lock,
 * account…) is acted on by us or reported changed, by any verb except the ones that only pass it
 * on ("received", "forwarded", "will review", "checking"):
 * - agent: "I/we (have|'ve|'ll|will|just|already…) <verb>" — "I've struck the penalty";
 * - state: "<object> (is|was|has been|will be|is now|is no longer…) <word>" — "the fee is gone";
 * - Romance/Germanic perfects: an auxiliary ("wir haben", "nous avons", "hemos", "abbiamo", "é
 *   stato", "foi", "hebben", "wurde") with a participle ("veranlasst", "restitué", "reintegrado")
 *   — or a first-person present/future of a change verb ("reintegramos", "renonçons").
 * Negated, conditional and general sentences are excused before this runs (reply-guard.ts).
 * Pure; linear in the sentence's words (each position looks at a window of at most 8 words).
 */
import { foldText, hasUnspacedScript } from './text-fold.ts';
import { positionsOf } from './term-match.ts';

const words = (text: string): string[] => text.trim().split(/\s+/).filter(Boolean);

/** Things of value whose change needs a person. */
const OBJECTS = words(`
  charge* fee fees penalt* refund* credit* balance* invoice* bill bills price* renewal* payment* money funds overcharge* amount*
  discount* voucher* plan plans subscription* seat seats tier* trial* upgrade* licen* premium account* login* lock* lockout* block*
  hold holds freeze* suspension* restriction* access password* statement* debt* arrears
  gebuhr* rechnung* zahlung* ruckzahlung* erstattung* betrag* gutschrift* saldo* abo abos tarif* konto* sperre* zugang*
  frais facture* paiement* remboursement* montant* solde* avoir* abonnement* compte* blocage* acces trop percu
  cargo* cobro* factura* pago* reembolso* importe importes saldo* suscripci* plan cuenta* bloqueo* acceso
  kosten factuur facturen betaling* terugbetaling* bedrag* tegoed* abonnement* account* blokkade* toegang
  addebit* fattur* pagament* rimbors* importo* penale* abbonament* conto* blocco* accesso
  cobranca* fatura* pagamento* reembolso* valor* taxa* assinatura* conta contas bloqueio* acesso`);

/** Verbs that only receive, relay, examine or regret: they promise nothing. */
const DEFLECTIONS = new Set(
  words(`
  received receive receiving forwarded forward forwarding passed pass passing escalated escalate escalating noted note noting
  logged recorded flagged raised shared reviewed review reviewing checked check checking look looking looked investigate
  investigating investigated examining examine understand understood see seen know sorry apologise apologize ask asked asking
  contact contacted reply replied respond get getting back discuss discussing considering consider working aware explained
  described listed shown visible due pending charged billed sent asking trying able unable happy glad here open keep kept decide
  decides decided reviews handle handles handled noticed found verified expected hoped wanted needed tried attached included
  mentioned answered realised realized wondered assumed reached followed opened created filed called emailed talked spoke informed
  notified pinged reproduced tested traced liked loved thought learned learnt apologised apologized thanked nemen recebemos recibimos riceviamo verificamos revisamos analisamos analizamos
  revisaremos verificaremos examinaremos respondemos responderemos vérifions examinons transmettons revenons
  erhalten weitergeleitet gepruft geprueft notiert angesehen bekommen recu recue transmis transmise verifie verifiee note notee
  examine examinee recibido recibida transmitido revisado revisada anotado visto ontvangen doorgestuurd gecontroleerd bekeken
  ricevuto ricevuta inoltrato inoltrata verificato verificata visto recebido recebida encaminhado verificado analisado`),
);

/** "I/we" and what may stand between them and their verb. */
const AGENTS = new Set(words('i we'));
const BETWEEN = new Set(
  words(`have ve ll will just already now also personally gone ahead and am m re are did been went have d had manually fully
  successfully quickly since`),
);
const MODALS = new Set(
  words('not can cannot could would may might should must never t haven hasn didn don won can couldn wouldn isn aren wasn weren shall'),
);

/** A value object's state: "is", "was", "has been", "is now", "will be", "is no longer", "went". */
const STATE_WORDS = new Set(words('is are was were been be now no longer s gone went got has have will ll already fully'));

// Perfects and passives by language: an auxiliary, then (within `reach` words) a participle.
// French participles are told by their accent ("levé", not "possible"), so these see accented words.
const PERFECTS: Array<{ auxiliaries: Set<string>; participle: RegExp; reach: number }> = [
  {
    auxiliaries: new Set(words('haben habe hat wurde wurden ist sind wird werden')),
    participle: /^(?:ge|ver|be|er|ent|zer|über|zurück|an|auf|aus|ab|frei|gut|weg)\p{L}{2,}(?:t|en)$/u,
    reach: 6,
  },
  {
    auxiliaries: new Set(words('avons ai ont été sera seront est sont')),
    participle: /^\p{L}{2,}(?:é|ée|és|ées|is|it|ite|u|ue|us)$/u,
    reach: 3,
  },
  {
    auxiliaries: new Set(words('hemos he ha han sido fue fueron será')),
    participle: /^\p{L}{3,}(?:ado|ada|ados|adas|ido|ida|idos|idas)$/u,
    reach: 3,
  },
  {
    auxiliaries: new Set(words('abbiamo ho hanno è stato stata stati state sarà')),
    participle: /^\p{L}{3,}(?:ato|ata|ati|ate|ito|ita|iti|ite|uto|uta|olto|olta)$/u,
    reach: 3,
  },
  {
    auxiliaries: new Set(words('foi foram temos tem já será')),
    participle: /^\p{L}{3,}(?:ado|ada|ados|adas|ido|ida|idos|idas)$/u,
    reach: 3,
  },
  {
    auxiliaries: new Set(words('hebben heb heeft werd werden wordt zijn')),
    participle: /^(?:ge|ver|be|bij|terug|op|af|vrij)\p{L}{3,}(?:d|t|en)$/u,
    reach: 6,
  },
];
/** First-person plural of a verb, right before the thing it acts on: "reintegramos el importe", "renonçons aux frais". */
const FIRST_PERSON = /^\p{L}{4,}(?:amos|emos|imos|ons|erons|irons|iamo|eremo|iremo|aremo)$/u;

/** English verbs that report or commit a change: past forms ending in "-ed", and these. */
const IRREGULAR = new Set(
  words(`put took taken gave given struck cut set sent made paid got knocked zeroed wiped voided dropped lifted cleared removed lowered
  reduced halved covered settled sorted fixed released restored reinstated reversed unlocked unblocked reset credited refunded
  waived cancelled canceled extended upgraded downgraded switched moved bumped added applied issued matched adjusted forgave
  forgiven wrote written take give strike knock zero wipe void drop lift clear remove lower reduce halve cover settle sort fix
  release restore reinstate reverse unlock unblock credit refund waive cancel extend upgrade downgrade switch move bump add
  apply issue match adjust forgive write`),
);

function objectsIn(tokens: readonly string[]): number[] {
  return OBJECTS.flatMap((o) => positionsOf(tokens, o));
}

/** The first verb after "I/we" (over words like "have", "just"), or null when a modal or a negation comes first. */
function agentVerb(tokens: readonly string[], at: number): { verb: string; at: number } | null {
  for (let i = at + 1; i < Math.min(tokens.length, at + 6); i += 1) {
    const token = tokens[i]!;
    if (MODALS.has(token)) return null;
    if (!BETWEEN.has(token)) return { verb: token, at: i };
  }
  return null;
}

/** Words that put what follows them out of the verb's reach ("added a note to your account"). */
const PREPOSITIONS = new Set(words('to on for in from about with at into onto of regarding under by'));

/** Whether a value object is the verb's own object: within five words after it, before any preposition. */
function actsOnObject(tokens: readonly string[], verbAt: number, distance: readonly number[]): boolean {
  for (let i = verbAt + 1; i < Math.min(tokens.length, verbAt + 6); i += 1) {
    if (distance[i] === 0) return true;
    if (PREPOSITIONS.has(tokens[i]!)) return false;
  }
  return false;
}

/**
 * Why the sentence's words promise a change to something of value, or null. `raw` are its words
 * with their accents, `folded` the same words folded (src/memory/text-fold.ts), position by position.
 */
export function structuralPromise(raw: readonly string[], folded: readonly string[]): string | null {
  const objects = objectsIn(folded);
  if (objects.length === 0) return null;
  // Distance from each word to the nearest value object, in two passes (linear).
  const distance = new Array<number>(folded.length).fill(Infinity);
  for (const o of objects) distance[o] = 0;
  for (let i = 1; i < folded.length; i += 1) distance[i] = Math.min(distance[i]!, distance[i - 1]! + 1);
  for (let i = folded.length - 2; i >= 0; i -= 1) distance[i] = Math.min(distance[i]!, distance[i + 1]! + 1);
  const near = (i: number) => distance[i]! <= 8;
  for (let i = 0; i < folded.length; i += 1) {
    const token = folded[i]!;
    if (AGENTS.has(token) && near(i)) {
      const found = agentVerb(folded, i);
      const verb = found?.verb ?? '';
      const changes = IRREGULAR.has(verb) || (/ed$/.test(verb) && !OBJECTS.includes(verb));
      if (found && changes && !DEFLECTIONS.has(verb) && actsOnObject(folded, found.at, distance))
        return `"${token} … ${verb}" acting on it`;
    }
    for (const perfect of PERFECTS) {
      if (!perfect.auxiliaries.has(raw[i]!) || !near(i) || hasNegationBefore(folded, i)) continue;
      const participle = raw.slice(i + 1, i + 1 + perfect.reach).find((w) => perfect.participle.test(w));
      if (participle && !DEFLECTIONS.has(folded[raw.indexOf(participle, i + 1)]!)) return `"${raw[i]} … ${participle}"`;
    }
    const objectAhead = folded.slice(i + 1, i + 5).some((_, k) => distance[i + 1 + k] === 0);
    if (FIRST_PERSON.test(token) && !DEFLECTIONS.has(token) && objectAhead && !hasNegationBefore(folded, i)) return `"${raw[i]}"`;
  }
  for (const o of objects.slice(0, 50)) {
    const state = stateAfter(folded, o);
    if (state) return state;
  }
  return null;
}

/** "<object> is now gone", "… no longer on hold", "… has been struck": a state word then a word that is no deflection. */
function stateAfter(tokens: readonly string[], object: number): string | null {
  let i = object + 1;
  while (i < tokens.length && i < object + 4 && !STATE_WORDS.has(tokens[i]!)) i += 1;
  if (!STATE_WORDS.has(tokens[i] ?? '')) return null;
  const first = i;
  while (i < tokens.length && STATE_WORDS.has(tokens[i]!)) i += 1;
  const said = tokens.slice(first, i);
  const word = tokens[i] ?? '';
  if (said.includes('no') && said.includes('longer')) return `"no longer ${word}"`;
  if (said.length === 1 && (said[0] === 'is' || said[0] === 'are' || said[0] === 'was' || said[0] === 'were' || said[0] === 's')) {
    // A bare "is" describes ("your balance is 40 EUR", "the fee was charged twice"): only a change word after it counts.
    return CHANGED.has(word) ? `"${said[0]} ${word}"` : null;
  }
  if (!word || DEFLECTIONS.has(word) || /ing$/.test(word) || MODALS.has(word)) return null;
  if (said.includes('been') || said.includes('now') || said.includes('gone') || said.includes('went')) return `"${said.join(' ')} ${word}"`;
  return CHANGED.has(word) ? `"${said.join(' ')} ${word}"` : null;
}

/** Words that report a change when they follow a bare "is"/"was". */
const CHANGED = new Set(
  words(`gone cleared removed void voided waived lifted released reversed cancelled canceled zero zeroed free off back paid settled
  covered sorted fixed unlocked unblocked restored reinstated reduced lowered halved credited refunded approved extended upgraded
  downgraded closed deleted activated`),
);

function hasNegationBefore(tokens: readonly string[], at: number): boolean {
  return tokens.slice(Math.max(0, at - 3), at).some((t) => NEGATIONS.has(t));
}
const NEGATIONS = new Set(words('not no never nicht kein keine nie ne pas jamais no nunca niet geen nooit non mai nao не nie'));

/**
 * A sentence's words, with accents and folded, position by position; null for text in a script
 * written without spaces (Chinese, Japanese: left to the vocabulary rules).
 */
export function sentenceWords(sentence: string): { raw: string[]; folded: string[] } | null {
  if (hasUnspacedScript(sentence)) return null;
  const raw = sentence
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}\p{M}]+/u)
    .filter(Boolean);
  const folded = raw.map((w) => foldText(w));
  return folded.every((w) => w !== '' && !w.includes(' ')) ? { raw, folded } : null;
}
