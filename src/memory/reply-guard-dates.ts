/**
 * Dates, weekdays, times of day, relative days and timeframes in a text, each with canonical keys,
 * for the outbound reply guard (src/memory/reply-guard.ts): a date the reply names is fine when
 * the context names the same one. Pure, linear in its (capped) input.
 */
import { foldText } from './text-fold.ts';
import { positionsOf } from './term-match.ts';

const CJK_ANY = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

export interface DateMention {
  text: string;
  kind: string;
  /** Canonical forms; a mention is in the context when one of them is. */
  keys: string[];
}

const MONTHS: Record<string, number> = {};
const addNames = (names: string, start = 1) =>
  names.split(' ').forEach((n, i) => n.split('/').forEach((alias) => (MONTHS[alias] = (i % 12) + start)));
addNames('january february march april may june july august september october november december');
addNames('jan feb mar apr may/mai jun jul aug sep/sept oct nov dec');
addNames('januar februar marz april mai juni juli august september oktober november dezember');
addNames('janvier fevrier mars avril mai juin juillet aout septembre octobre novembre decembre');
addNames('enero febrero marzo abril mayo junio julio agosto septiembre/setiembre octubre noviembre diciembre');
addNames('januari februari maart april mei juni juli augustus september oktober november december');
addNames('gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre');
addNames('janeiro fevereiro marco abril maio junho julho agosto setembro outubro novembro dezembro');
// A month named without a day counts only after a word like "by", "end of", "bis", "fin": month
// names are also names ("June", "Marco") and words ("may", "mai" is Italian for "never").
const MONTH_MARKERS = new Set(
  'by in until till before end early mid late bis im ende anfang mitte vor fin debut avant en antes finales principios eind begin voor entro fine inizio prima ate final'.split(
    ' ',
  ),
);

const WEEKDAYS: Record<string, number> = {};
const addDays = (names: string) => names.split(' ').forEach((n, i) => n.split('/').forEach((alias) => (WEEKDAYS[alias] = i)));
addDays('sunday monday tuesday wednesday thursday friday saturday');
addDays('sonntag montag dienstag mittwoch donnerstag freitag samstag/sonnabend');
addDays('dimanche lundi mardi mercredi jeudi vendredi samedi');
addDays('domingo lunes martes miercoles jueves viernes sabado');
addDays('zondag maandag dinsdag woensdag donderdag vrijdag zaterdag');
addDays('domenica lunedi martedi mercoledi giovedi venerdi sabato');
const PT_WEEKDAYS: Record<string, number> = { segunda: 1, terca: 2, quarta: 3, quinta: 4, sexta: 5 };
const CJK_WEEKDAYS: Array<[string, number]> = [
  ['日曜', 0],
  ['月曜', 1],
  ['火曜', 2],
  ['水曜', 3],
  ['木曜', 4],
  ['金曜', 5],
  ['土曜', 6],
  ['星期日', 0],
  ['星期天', 0],
  ['星期一', 1],
  ['星期二', 2],
  ['星期三', 3],
  ['星期四', 4],
  ['星期五', 5],
  ['星期六', 6],
  ['周日', 0],
  ['周一', 1],
  ['周二', 2],
  ['周三', 3],
  ['周四', 4],
  ['周五', 5],
  ['周六', 6],
];

/** Relative days and weeks, as folded phrases, with the key they share across languages. */
const RELATIVE: Array<[string, string]> = [
  ...'tomorrow|morgen|demain|manana|domani|amanha|завтра|jutro'.split('|').map((w): [string, string] => [w, 'rel:tomorrow']),
  ...'day after tomorrow|ubermorgen|apres demain|pasado manana|overmorgen|dopodomani|depois de amanha'
    .split('|')
    .map((w): [string, string] => [w, 'rel:+2d']),
  ...'tonight|this evening|later today|by today|end of day|end of the day|eod|close of business|heute abend|ce soir|esta noche|vanavond|stasera|hoje a noite'
    .split('|')
    .map((w): [string, string] => [w, 'rel:today']),
  ...'next week|nachste woche|kommende woche|semaine prochaine|proxima semana|semana que viene|volgende week|prossima settimana'
    .split('|')
    .map((w): [string, string] => [w, 'rel:next-week']),
  ...'this week|end of the week|end of week|diese woche|ende der woche|cette semaine|fin de semaine|esta semana|deze week|questa settimana'
    .split('|')
    .map((w): [string, string] => [w, 'rel:this-week']),
  ...'end of the month|end of month|ende des monats|monatsende|fin du mois|fin de mes|eind van de maand|fine mese|fim do mes'
    .split('|')
    .map((w): [string, string] => [w, 'rel:month-end']),
];
// "morgen" is also "morning" in "guten morgen"/"heute morgen"; "mañana" is "morning" after these.
const NOT_TOMORROW_BEFORE = new Set(['guten', 'heute', 'jeden', 'gestern', 'esta', 'la', 'por', 'de', 'cada', 'goede']);
const CJK_RELATIVE: Array<[string, string]> = [
  ['明後日', 'rel:+2d'],
  ['后天', 'rel:+2d'],
  ['明日', 'rel:tomorrow'],
  ['明天', 'rel:tomorrow'],
  ['今晩', 'rel:today'],
  ['今晚', 'rel:today'],
  ['本日中', 'rel:today'],
  ['今天内', 'rel:today'],
  ['来週', 'rel:next-week'],
  ['下周', 'rel:next-week'],
  ['下星期', 'rel:next-week'],
  ['今週', 'rel:this-week'],
  ['本周', 'rel:this-week'],
  ['月末', 'rel:month-end'],
];

const UNITS: Record<string, string> = {};
const addUnits = (unit: string, names: string) => names.split(' ').forEach((n) => (UNITS[n] = unit));
addUnits('hour', 'hour hours hrs h stunde stunden std heure heures hora horas uur ore ora');
addUnits('day', 'day days tag tage tagen werktag werktage werktagen jour jours dia dias dag dagen werkdag werkdagen giorno giorni');
addUnits('week', 'week weeks woche wochen semaine semaines semana semanas weken settimana settimane');
addUnits('month', 'month months monat monate monaten mois mes meses maand maanden mese mesi');
const BUSINESS = new Set('business working werk ouvres ouvrables ouvre habiles laborables lavorativi uteis utili'.split(' '));
const SPAN_MARKERS = new Set(
  'within in inside next under innerhalb binnen sous dans ici en dentro plazo entro tra fra em prazo up bis ate hasta'.split(' '),
);
const NUMBER_WORDS: Record<string, number> = {};
const addNumbers = (names: string) => names.split(' ').forEach((n, i) => n.split('/').forEach((alias) => (NUMBER_WORDS[alias] = i + 1)));
addNumbers('one/a/an two three four five six seven eight nine ten');
addNumbers('ein/einem/einer/eine zwei drei vier funf sechs sieben acht neun zehn');
addNumbers('un/une deux trois quatre cinq six sept huit neuf dix');
addNumbers('uno/una/un dos tres cuatro cinco seis siete ocho nueve diez');
addNumbers('een twee drie vier vijf zes zeven acht negen tien');
addNumbers('uno/una/un due tre quattro cinque sei sette otto nove dieci');
addNumbers('um/uma dois/duas tres quatro cinco seis sete oito nove dez');

const dayOf = (token: string | undefined): number | null => {
  const match = token ? /^(\d{1,2})(?:st|nd|rd|th|er|e|eme|o|a|º|ª)?$/.exec(token) : null;
  const day = match ? Number(match[1]) : NaN;
  return day >= 1 && day <= 31 ? day : null;
};
const mdKey = (month: number, day: number) => `md:${month}-${day}`;

function validMonthDay(month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

/** Dates, weekdays, times of day, relative days and timeframes in the text, with canonical keys. */
export function findDates(text: string, now: Date | undefined): DateMention[] {
  const found: DateMention[] = [];
  const lower = text.toLowerCase();

  for (const m of lower.matchAll(/\b(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)/g)) {
    const month = Number(m[2]);
    const day = Number(m[3]);
    if (validMonthDay(month, day)) found.push({ text: m[0], kind: 'a date', keys: [mdKey(month, day)] });
  }
  for (const m of lower.matchAll(/\b(\d{1,2})([./])(\d{1,2})\2(\d{4}|\d{2}(?!\d))?/g)) {
    const [a, b] = [Number(m[1]), Number(m[3])];
    if (m[2] === '/' && !m[4]) continue; // "24/7", "1/2": not a date without a year
    if (m[2] === '.' && !m[4] && !m[0].endsWith('.')) continue;
    const keys = [validMonthDay(b, a) ? mdKey(b, a) : '', m[2] === '/' && validMonthDay(a, b) ? mdKey(a, b) : ''].filter(Boolean);
    if (keys.length > 0) found.push({ text: m[0], kind: 'a date', keys });
  }
  for (const m of text.matchAll(/(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号號]/g)) {
    const [month, day] = [Number(m[2]), Number(m[3])];
    if (validMonthDay(month, day)) found.push({ text: m[0], kind: 'a date', keys: [mdKey(month, day)] });
  }
  for (const m of lower.matchAll(
    /\b(\d{1,2})(?::(\d{2}))?\s?(am|pm|a\.m\.|p\.m\.|uhr|h(?=\d{2}))|\b(\d{1,2}):(\d{2})\b|(\d{1,2})時(?:(\d{1,2})分)?/g,
  )) {
    let hour = Number(m[1] ?? m[4] ?? m[6]);
    const minute = Number(m[2] ?? m[5] ?? m[7] ?? 0);
    const suffix = (m[3] ?? '').replace(/\./g, '');
    if (suffix === 'pm' && hour < 12) hour += 12;
    if (suffix === 'am' && hour === 12) hour = 0;
    if (hour <= 24 && minute < 60) found.push({ text: m[0], kind: 'a time', keys: [`t:${hour % 24}:${minute}`] });
  }

  const folded = foldText(text);
  const tokens = folded.split(' ');
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    const month = MONTHS[token];
    if (month !== undefined) {
      const day =
        dayOf(tokens[i - 1]) ?? (tokens[i - 1] === 'de' || tokens[i - 1] === 'of' ? dayOf(tokens[i - 2]) : null) ?? dayOf(tokens[i + 1]);
      if (day !== null) found.push({ text: spanText(tokens, i - 1, i + 1), kind: 'a date', keys: [mdKey(month, day), `m:${month}`] });
      else if (MONTH_MARKERS.has(tokens[i - 1] ?? '') || MONTH_MARKERS.has(tokens[i - 2] ?? '')) {
        found.push({ text: spanText(tokens, i - 1, i), kind: 'a month', keys: [`m:${month}`] });
      }
      continue;
    }
    const weekday = WEEKDAYS[token] ?? (tokens[i + 1] === 'feira' ? PT_WEEKDAYS[token] : undefined);
    if (weekday !== undefined) {
      found.push({ text: token, kind: 'a weekday', keys: [`wd:${weekday}`, ...(now ? [nextWeekdayKey(now, weekday)] : [])] });
      continue;
    }
    const glued = /^(\d{1,3})([a-z]+)$/.exec(token);
    if (glued && UNITS[glued[2]!] !== undefined && (SPAN_MARKERS.has(tokens[i - 1] ?? '') || SPAN_MARKERS.has(tokens[i - 2] ?? ''))) {
      found.push({ text: spanText(tokens, i - 1, i), kind: 'a timeframe', keys: [`span:${Number(glued[1])}:${UNITS[glued[2]!]}`] });
      continue;
    }
    const unit = UNITS[token];
    if (unit !== undefined && i > 0) {
      let n = i - 1;
      const business = BUSINESS.has(tokens[n]!);
      if (business) n -= 1;
      const count = /^\d{1,3}$/.test(tokens[n] ?? '') ? Number(tokens[n]) : NUMBER_WORDS[tokens[n] ?? ''];
      const marked = business || SPAN_MARKERS.has(tokens[n - 1] ?? '') || SPAN_MARKERS.has(tokens[n - 2] ?? '');
      if (count !== undefined && marked && !(token === 'h' && business)) {
        found.push({ text: spanText(tokens, n - 1, i), kind: 'a timeframe', keys: [`span:${count}:${unit}`] });
      }
    }
  }
  for (const [phrase, key] of RELATIVE) {
    for (const at of positionsOf(tokens, phrase)) {
      if ((phrase === 'morgen' || phrase === 'manana') && NOT_TOMORROW_BEFORE.has(tokens[at - 1] ?? '')) continue;
      found.push({ text: phrase, kind: 'a relative date', keys: [key] });
    }
  }
  const compact = folded.replace(/ /g, '');
  if (CJK_ANY.test(compact)) {
    for (const [word, key] of CJK_RELATIVE) if (compact.includes(word)) found.push({ text: word, kind: 'a relative date', keys: [key] });
    for (const [word, weekday] of CJK_WEEKDAYS) {
      if (compact.includes(word))
        found.push({ text: word, kind: 'a weekday', keys: [`wd:${weekday}`, ...(now ? [nextWeekdayKey(now, weekday)] : [])] });
    }
    for (const m of compact.matchAll(
      /(\d{1,3})(?:個|个)?(営業日|工作日|日|天|時間|小时|週間|周|か月|ヶ月|个月)(?:以内|内|後|后|で|までに)/g,
    )) {
      const unit = /時間|小时/.test(m[2]!) ? 'hour' : /週間|周/.test(m[2]!) ? 'week' : /月/.test(m[2]!) ? 'month' : 'day';
      found.push({ text: m[0], kind: 'a timeframe', keys: [`span:${Number(m[1])}:${unit}`] });
    }
  }
  return found;
}

function spanText(tokens: readonly string[], from: number, to: number): string {
  return tokens.slice(Math.max(0, from), to + 1).join(' ');
}

function nextWeekdayKey(now: Date, weekday: number): string {
  const ahead = (weekday - now.getUTCDay() + 7) % 7 || 7;
  const date = new Date(now.getTime() + ahead * 86_400_000);
  return mdKey(date.getUTCMonth() + 1, date.getUTCDate());
}
