/**
 * More fact rules of the offline provider (rules, not a model; see src/llm/offline-promotion.ts):
 * what the demo's customers state plainly in the languages of `fixtures/emails/` -- the name they
 * sign with, the company they write for ("I'm the bookkeeper for ...", "さくら商事の佐藤です",
 * "我们公司（华信科技）"), the order they write about ("Bestellung 88213", "pedido A-20931"),
 * and "Email is still best". Every value is a substring of its evidence quote, which is quoted
 * literally; the written policy still decides every fact. Every pattern is linear-time: literal
 * keywords and bounded repetitions, no nested quantifiers.
 */
import type { FactCategory } from '../memory/types.ts';

export interface FactRule {
  pattern: RegExp;
  key: string;
  category: FactCategory;
  confidence: number;
  value: (match: RegExpMatchArray) => string;
}

// An order reference: optional letters, an optional hyphen, digits ("88213", "A-20931", "AC-110193").
const ORDER_ID = '([A-Za-z]{0,4}-?\\d{3,12}(?:-\\d{1,12})?)(?![\\p{L}\\p{N}])';
// A capitalised company name on one line: up to six words, "&" allowed ("Oasis Travel & Tours LLC").
// (No dots: "... Design Studio. Alice copied me" ends at "Studio".)
const COMPANY_NAME = "(\\p{Lu}[\\p{L}\\d'’-]{0,40}(?:[ \\t]+(?:&|\\p{Lu}[\\p{L}\\d'’-]{0,40})){0,5})";

// "I'm the bookkeeper for Okafor Design Studio": the role (group 1) and the company (group 2).
const ROLE_AT = new RegExp(
  `\\bI(?:'m|’m| am)[ \\t]+(?:the|an?)[ \\t]+([a-z]{3,30}(?:[ \\t][a-z]{3,30})?)[ \\t]+(?:for|at)[ \\t]+${COMPANY_NAME}`,
  'u',
);

const group = (m: RegExpMatchArray, i = 1): string => (m[i] ?? '').trim();
const company = (m: RegExpMatchArray, i = 1): string => group(m, i).replace(/['’-]+$/u, '');

export const MORE_FACT_RULES: FactRule[] = [
  {
    // The order the customer writes about, in the fixtures' languages.
    pattern: new RegExp(
      `(?<![\\p{L}])(?:order|bestellung|commande|pedido|bestelling|ordine|заказ|заказа)(?:snummer|nummer| number| no\\.?| nr\\.?| n°| nº| №)?[ \\t]*[#№]?[ \\t]*${ORDER_ID}|(?:订单号|订单编号|注文番号)(?:分别)?(?:是|は|：|:)?[ \\t]*${ORDER_ID}`,
      'iu',
    ),
    key: 'order_number',
    category: 'situation',
    confidence: 0.8,
    value: (m) => group(m, 1) || group(m, 2),
  },
  {
    // "I'm the bookkeeper for Okafor Design Studio" (the role and the company, one quote).
    pattern: ROLE_AT,
    key: 'company',
    category: 'identity',
    confidence: 0.85,
    value: (m) => company(m, 2),
  },
  {
    pattern: ROLE_AT,
    key: 'job_title',
    category: 'identity',
    confidence: 0.85,
    value: (m) => group(m, 1),
  },
  {
    // "our full company name, Oasis Travel & Tours LLC" / "our company name is ...".
    pattern: new RegExp(`\\b(?:our|my)[ \\t]+(?:full[ \\t]+)?company(?:[ \\t]+name)?(?:,|[ \\t]+is)?[ \\t]+${COMPANY_NAME}`, 'iu'),
    key: 'company',
    category: 'identity',
    confidence: 0.85,
    value: (m) => company(m),
  },
  {
    // "au lieu de la société (Boutique Lumière SARL, SIRET ...)".
    pattern: /(?<![\p{L}])(?:société|firma|empresa|bedrijf|società)[ \t]*[(（][ \t]*(\p{Lu}[^,()（）\n]{1,60}?)[ \t]*[,)）]/iu,
    key: 'company',
    category: 'identity',
    confidence: 0.85,
    value: (m) => company(m),
  },
  {
    // Russian: ООО «СеверТрейд» / ООО "СеверТрейд".
    pattern: /(?<![\p{L}])(?:ООО|ОАО|ЗАО|АО|ИП)[ \t]*[«"„“]([^«»"„“\n]{2,60})[»"“”]/u,
    key: 'company',
    category: 'identity',
    confidence: 0.85,
    value: (m) => group(m),
  },
  {
    // Japanese self-introduction: さくら商事の佐藤です。 / みなと内科クリニックの山田と申します。
    pattern: /(?<=^|[。！\s])([^\s。、！？の]{2,20})の\p{Script=Han}{1,4}(?:です|と申します)/mu,
    key: 'company',
    category: 'identity',
    confidence: 0.85,
    value: (m) => group(m),
  },
  {
    // Chinese: 我们公司（华信科技） / 我们公司是华信科技。
    pattern: /(?:我们|我|本)公司(?:[（(]([^）)\n]{2,30})[）)]|是([^，,。！\n]{2,30}))/u,
    key: 'company',
    category: 'identity',
    confidence: 0.85,
    value: (m) => group(m, 1) || group(m, 2),
  },
  {
    // "Email is still best for anything that needs a paper trail."
    pattern: /\b(e-?mail|phone|chat|sms|text)[ \t]+is[ \t]+(?:still[ \t]+|always[ \t]+)?(?:best|easiest|preferred)\b/i,
    key: 'preferred_contact_channel',
    category: 'preference',
    confidence: 0.85,
    value: (m) => (/mail/i.test(group(m)) ? 'email' : /sms|text/i.test(group(m)) ? 'sms' : group(m).toLowerCase()),
  },
];

// A name as people sign: one to four capitalised words (particles such as "de", "van" between
// them), or a Chinese/Japanese name of Han characters; a Cyrillic name the same way.
const NAME_LINE =
  /^(?:\p{Lu}[\p{Ll}'’-]{1,30}(?:[ \t]+(?:(?:de|van|der|den|von|da|di|du|la|le|al|el|bin|ter)[ \t]+){0,2}\p{Lu}[\p{L}'’-]{1,30}){0,3}|\p{Script=Han}{1,4}(?:[ \t\u3000]\p{Script=Han}{1,4})?)$/u;

/**
 * The name the customer signs with: the email's last line when it has a name's shape and stands
 * after a blank line, a sign-off ("Best regards,") or a short line ending in a comma ("Warmly,"). A full name is surer (0.9) than a first name
 * (0.8, the identity minimum), so a later "Marcus" does not supersede "Marcus Reid": the policy's
 * supersede-weaker rule refuses a value more than 0.05 less confident.
 */
export function signatureName(
  text: string,
  isSignOff: (line: string) => boolean,
): { value: string; evidence: string; confidence: number } | null {
  const lines = text
    .slice(-2_000)
    .split(/\r?\n/)
    .map((l) => l.trim());
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  const last = lines.at(-1);
  const before = lines.at(-2);
  if (!last || before === undefined || last.length > 60 || !NAME_LINE.test(last) || isSignOff(last)) return null;
  if (before !== '' && !isSignOff(before) && !(before.length <= 30 && /[,，]$/u.test(before))) return null;
  const full = /[ \t\u3000]/u.test(last);
  return { value: last, evidence: last, confidence: full ? 0.9 : 0.8 };
}
