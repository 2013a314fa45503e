// Reads the new-text corpus (fixtures/emails/new-text/<language>.txt): many small reply bodies,
// each with the new text a person would say the customer wrote.
//
// File format (<language>.txt for the first batch, <language>.b2.txt for the second; the file name
// starts with the language tag):
//   lines before the first case are comments
//   @@ case <id> | <client layout> | <pattern>
//   <the text/plain part, verbatim; may be empty>
//   @@ html                      (optional: the text/html part follows)
//   <html>
//   @@ expected
//   <the expected new text>
// A case ends at the next "@@ case" line or at the end of the file.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One corpus case: the body parts and the new text expected from them. */
export interface NewTextCase {
  id: string;
  language: string;
  /** "1" for <language>.txt, "N" for <language>.bN.txt (b2 and b4 were written after the code, as hold-outs). */
  batch: string;
  client: string;
  pattern: string;
  text: string | null;
  html: string | null;
  expected: string;
}

const CASE_LINE = /^@@ case (\S+) \| ([\w.-]+) \| ([\w-]+)\s*$/;

/**
 * "Exact" match: both sides compared after removing trailing whitespace on each line and blank
 * lines at the start and end. Nothing else (no case folding, no whitespace collapsing inside lines,
 * no blank-line collapsing between paragraphs).
 */
export function normaliseNewText(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+/, '')
    .replace(/\n+$/, '');
}

function parseFile(file: string, language: string, batch: string): NewTextCase[] {
  const lines = readFileSync(file, 'utf8').replace(/\r\n/g, '\n').split('\n');
  const cases: NewTextCase[] = [];
  let current: { id: string; client: string; pattern: string; sections: Record<string, string[]>; at: string } | null = null;
  const flush = (): void => {
    if (!current) return;
    const { sections } = current;
    const text = (sections['text'] ?? []).join('\n').replace(/\n+$/, '');
    const html = sections['html'] ? sections['html'].join('\n').trim() : null;
    if (!sections['expected']) throw new Error(`${file}: case ${current.id} has no "@@ expected" section`);
    cases.push({
      id: current.id,
      language,
      batch,
      client: current.client,
      pattern: current.pattern,
      text: text.trim() === '' ? null : text,
      html,
      expected: normaliseNewText(sections['expected'].join('\n')),
    });
  };
  for (const line of lines) {
    const header = CASE_LINE.exec(line);
    if (header) {
      flush();
      current = { id: header[1] ?? '', client: header[2] ?? '', pattern: header[3] ?? '', sections: { text: [] }, at: 'text' };
      continue;
    }
    if (line.startsWith('@@ ')) {
      if (!current) throw new Error(`${file}: "${line}" before the first case`);
      const section = line.slice(3).trim();
      if (section !== 'html' && section !== 'expected') throw new Error(`${file}: unknown section "${line}"`);
      current.at = section;
      current.sections[section] = [];
      continue;
    }
    current?.sections[current.at]?.push(line);
  }
  flush();
  return cases;
}

/** All cases of the corpus folder, in file-name order. Case ids must be unique. */
export function loadNewTextCorpus(dir: string): NewTextCase[] {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.txt'))
    .sort();
  const cases = files.flatMap((name) => {
    const [language = name, second] = name.replace(/\.txt$/, '').split('.');
    return parseFile(path.join(dir, name), language, /^b\d+$/.test(second ?? '') ? (second ?? '').slice(1) : '1');
  });
  const seen = new Set<string>();
  for (const c of cases) {
    if (seen.has(c.id)) throw new Error(`duplicate case id ${c.id}`);
    seen.add(c.id);
  }
  return cases;
}

/** Cases, exact matches and rate per key, sorted by key. */
export interface RateRow {
  key: string;
  cases: number;
  exact: number;
  rate: number;
}

/** Groups results by a key of the case and computes the exact-match rate of each group. */
export function ratesBy(results: Array<{ case: NewTextCase; exact: boolean }>, key: (c: NewTextCase) => string): RateRow[] {
  const groups = new Map<string, { cases: number; exact: number }>();
  for (const r of results) {
    const k = key(r.case);
    const g = groups.get(k) ?? { cases: 0, exact: 0 };
    g.cases += 1;
    if (r.exact) g.exact += 1;
    groups.set(k, g);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, g]) => ({ key: k, cases: g.cases, exact: g.exact, rate: g.exact / g.cases }));
}

/** A fixed-width text table of rate rows, with a total line. */
export function formatRates(title: string, rows: RateRow[]): string {
  const width = Math.max(title.length, ...rows.map((r) => r.key.length));
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`.padStart(6);
  const total = rows.reduce((acc, r) => ({ cases: acc.cases + r.cases, exact: acc.exact + r.exact }), { cases: 0, exact: 0 });
  const row = (key: string, cases: number, exact: number): string =>
    `${key.padEnd(width)}  ${String(cases).padStart(5)}  ${String(exact).padStart(5)} ${pct(exact / Math.max(1, cases))}`;
  const out = [`${title.padEnd(width)}  cases  exact   rate`];
  for (const r of rows) out.push(row(r.key, r.cases, r.exact));
  out.push(row('total', total.cases, total.exact));
  return out.join('\n');
}
