/**
 * Deterministic text embeddings for the scripted OpenAI-compatible server: a function of the text
 * (and the model name) only, never of the labelled questions or their answers.
 *
 * Each word is folded (case, accents), mapped through a small multilingual lexicon of support
 * vocabulary to a concept when it has one ("money back", "reimburse", "Rückerstattung" →
 * refund), else cut to a five-letter stem; concepts and stems are hashed (signed feature hashing)
 * into a fixed number of dimensions with weight 1, and each word's character trigrams with a
 * smaller weight (spelling variants, compounds). CJK runs become character bigrams. The vector is
 * normalised. It is a bag of words with synonyms: it helps where a question says in other words
 * what a passage says, which is what a real embeddings model does far better.
 */
import { createHash } from 'node:crypto';

export const SCRIPTED_EMBEDDING_DIMENSIONS = 256;

// Concept ← words (folded, and stems: a word starting with a listed stem of 5+ letters matches).
const LEXICON: Record<string, string[]> = {
  refund: [
    'refund',
    'money back',
    'reimburs',
    'repay',
    'rückerstattung',
    'ruckerstattung',
    'erstatt',
    'rembours',
    'reembols',
    'devolucion',
    'terugbetal',
  ],
  cancel: ['cancel', 'terminat', 'unsubscrib', 'kundig', 'kündig', 'resili', 'annul', 'cancela', 'opzeg'],
  invoice: ['invoice', 'bill', 'receipt', 'rechnung', 'factur', 'factuur', '請求書'],
  charge: ['charge', 'debit', 'billed', 'abbuch', 'prelev', 'cargo', 'cobro'],
  twice: ['twice', 'double', 'duplicate', 'two charges', 'doppelt', 'deux fois', 'dos veces'],
  password: ['password', 'passwort', 'kennwort', 'mot de passe', 'contrasen', 'wachtwoord', 'credential'],
  login: ['login', 'log in', 'sign in', 'signin', 'anmeld', 'connexion', 'iniciar sesion', 'inlog'],
  locked: ['locked', 'lockout', 'locked out', 'blocked', 'gesperrt', 'bloque'],
  twofactor: ['two factor', '2fa', 'two-factor', 'mfa', 'authenticator', 'second factor', 'verification code', 'one-time code'],
  sso: ['sso', 'single sign-on', 'single sign on', 'saml', 'okta', 'azure ad', 'entra'],
  export: ['export', 'download', 'extract', 'exportier', 'exporter', 'exportar', 'exporteren'],
  spreadsheet: ['excel', 'xlsx', 'spreadsheet', 'csv', 'sheet', 'tabelle', 'tableur', 'hoja de calculo'],
  delivery: [
    'deliver',
    'shipping',
    'shipment',
    'ship',
    'arrive',
    'lieferung',
    'versand',
    'livraison',
    'envio',
    'entrega',
    'levering',
    'parcel',
    'package',
  ],
  delay: ['delay', 'late', 'stuck', 'waiting', 'verspat', 'verspät', 'retard', 'retraso', 'vertraging'],
  tracking: ['tracking', 'track', 'sendungsverfolg', 'suivi', 'seguimiento'],
  return: ['return', 'send back', 'rücksend', 'rucksend', 'retour', 'devolver', 'terugsturen'],
  broken: ['broken', 'faulty', 'defect', 'stopped working', 'not working', 'dead', 'kaputt', 'defekt', 'panne', 'averia', 'stuk'],
  price: ['price', 'cost', 'pricing', 'how much', 'fee', 'preis', 'kost', 'prix', 'tarif', 'precio', 'prijs'],
  discount: ['discount', 'cheaper', 'reduction', 'rabatt', 'remise', 'descuento', 'korting', 'non-profit', 'nonprofit', 'charity'],
  plan: ['plan', 'tier', 'subscription', 'abonnement', 'suscripcion', 'abo'],
  upgrade: ['upgrade', 'move up', 'higher plan'],
  downgrade: ['downgrade', 'move down', 'lower plan', 'smaller plan'],
  seat: ['seat', 'user licen', 'licence', 'license', 'platz', 'siege'],
  member: ['member', 'colleague', 'teammate', 'coworker', 'co-worker', 'mitarbeiter', 'kollege', 'collegue', 'equipo', 'collega'],
  invite: ['invite', 'add someone', 'einlad', 'inviter', 'invitar', 'uitnodig'],
  remove: ['remove', 'delete', 'offboard', 'entfern', 'loschen', 'lösch', 'supprim', 'eliminar', 'verwijder'],
  data: ['data', 'daten', 'donnees', 'datos', 'gegevens', 'information'],
  retention: ['retention', 'kept', 'keep', 'stored for', 'aufbewahr', 'conservation', 'conservacion', 'bewaar', 'trash'],
  location: ['stored', 'hosted', 'region', 'server location', 'data center', 'datacenter', 'eu', 'europe'],
  rate: ['rate limit', 'throttl', 'too many requests', '429', 'requests per'],
  webhook: ['webhook', 'callback', 'event notification'],
  retry: ['retry', 'retried', 'redeliver', 'resend', 'try again'],
  api: ['api', 'endpoint', 'rest'],
  error: ['error', '500', 'fails', 'failure', 'fehler', 'erreur'],
  dark: ['dark mode', 'dark theme', 'night mode', 'dark'],
  vat: ['vat', 'tax id', 'tax number', 'ust', 'tva', 'iva', 'btw'],
  company: ['company name', 'business name', 'legal name', 'firmenname', 'raison sociale', '宛名'],
  payment: ['payment', 'pay', 'zahlung', 'paiement', 'pago', 'betaling'],
  card: ['credit card', 'card', 'visa', 'mastercard', 'amex', 'american express', 'karte', 'carte', 'tarjeta'],
  transfer: ['bank transfer', 'wire', 'sepa', 'uberweis', 'überweis', 'virement', 'transferencia'],
  annual: ['annual', 'yearly', 'per year', 'jahrlich', 'jährlich', 'annuel', 'anual', 'jaarlijks'],
  monthly: ['monthly', 'per month', 'monatlich', 'mensuel', 'mensual', 'maandelijks'],
  email: ['email', 'e-mail', 'mail', 'newsletter', 'notification'],
  phone: ['phone', 'call', 'telefon', 'telephone', 'telefono', 'mobile'],
  import: ['import', 'upload', 'bring in', 'importier', 'importer', 'importar'],
  contact: ['contact', 'kontakt', 'contacto'],
  dpa: ['dpa', 'data processing agreement', 'auftragsverarbeitung', 'gdpr', 'dsgvo', 'rgpd'],
  window: ['window', 'deadline', 'how long', 'how many days', 'within', 'frist', 'delai', 'plazo', 'termijn'],
  reissue: ['reissue', 're-issue', 'new copy', 'resend invoice', '再発行'],
};

const STOPWORDS = new Set(
  (
    'a an and are as at be but by can could do does for from have how i if in is it its me my no not of on or our please so that the ' +
    'their them there this to us was we what when where which who why will with would you your der die das und ist ich wie kann ein ' +
    'eine mit von zu für auf nicht es sie wir mein bitte le la les et est je un une des du de pour sur pas il nous vous mon ma el los ' +
    'las y es un una para por con mi que en se lo het een van ik mijn is op'
  ).split(' '),
);

function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

const PHRASES = Object.entries(LEXICON)
  .flatMap(([concept, words]) => words.map((w) => ({ concept, phrase: fold(w) })))
  .filter((p) => p.phrase.includes(' ') || /[^\p{Script=Latin}\p{N}-]/u.test(p.phrase))
  .sort((a, b) => b.phrase.length - a.phrase.length);
const STEMS = new Map<string, string>();
for (const [concept, words] of Object.entries(LEXICON)) for (const w of words) if (!w.includes(' ')) STEMS.set(fold(w), concept);

function conceptOf(word: string): string | null {
  const exact = STEMS.get(word);
  if (exact) return exact;
  for (let n = Math.min(word.length, 14); n >= 5; n--) {
    const concept = STEMS.get(word.slice(0, n));
    if (concept) return concept;
  }
  return null;
}

function bucket(feature: string, seed: string, dims: number): { index: number; sign: number } {
  const digest = createHash('sha256').update(seed).update('\u0000').update(feature).digest();
  return { index: digest.readUInt32BE(0) % dims, sign: (digest[4]! & 1) === 0 ? 1 : -1 };
}

/** The scripted embedding of `text` for `model`: deterministic, unit length (zero for a text with no words). */
export function scriptedEmbedding(text: string, model: string, dims = SCRIPTED_EMBEDDING_DIMENSIONS): number[] {
  const vector = new Float64Array(dims);
  const add = (feature: string, weight: number) => {
    const { index, sign } = bucket(feature, model, dims);
    vector[index]! += sign * weight;
  };
  let folded = fold(text.slice(0, 20_000));
  for (const { concept, phrase } of PHRASES) {
    if (!folded.includes(phrase)) continue;
    add(`c:${concept}`, 1);
    folded = folded.split(phrase).join(' ');
  }
  folded = folded.replace(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/gu, (run) => {
    const chars = [...run];
    return ' ' + chars.map((c, i) => (i + 1 < chars.length ? c + chars[i + 1]! : chars.length === 1 ? c : '')).join(' ') + ' ';
  });
  for (const word of folded.match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOPWORDS.has(word) || (word.length < 2 && /^[a-z]$/.test(word))) continue;
    const concept = conceptOf(word);
    add(concept ? `c:${concept}` : `w:${word.slice(0, 5)}`, 1);
    const padded = `^${word}$`;
    for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`, 0.25);
  }
  let norm = 0;
  for (const v of vector) norm += v * v;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return Array.from(vector, (v) => v * scale);
}
