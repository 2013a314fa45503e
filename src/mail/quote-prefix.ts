// Quote marks that are not a plain ">": Usenet-style "Name> " prefixes (Emacs Gnus/Supercite,
// old newsreaders: "Bob> the old text"), and the subject prefixes that mark a reply. Pure; each
// check looks at one short line, and the run detection is one pass over the lines.

// "Name> " or "NB> ": a short word of letters (digits, dot, dash, underscore after the first) and ">".
const NAME_PREFIX = /^[ \t]{0,4}([A-Za-z][A-Za-z0-9._-]{0,23})>(?:[ \t]|$)/;
const MAX_PREFIXED_LINE = 2000;

function prefixOf(line: string): string | null {
  if (line.length > MAX_PREFIXED_LINE) return null;
  return NAME_PREFIX.exec(line)?.[1] ?? null;
}

/**
 * Marks (1) the lines quoted with a Usenet "Name> " prefix: runs of two or more consecutive
 * lines with the same prefix (blank lines between them allowed), so that a customer's single
 * "Note> see below" is not taken for a quote; once a prefix has formed such a run, its single
 * lines elsewhere (between inline answers) are quotes too.
 */
export function usenetQuotedLines(lines: readonly string[]): Uint8Array {
  const marks = new Uint8Array(lines.length);
  let runPrefix: string | null = null;
  let runLines: number[] = [];
  const confirmed = new Set<string>();
  const close = (): void => {
    if (runLines.length >= 2 && runPrefix !== null) {
      confirmed.add(runPrefix);
      for (const j of runLines) marks[j] = 1;
    }
    runPrefix = null;
    runLines = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.trim() === '') continue;
    const prefix = prefixOf(line);
    if (prefix === null || prefix !== runPrefix) {
      close();
      if (prefix !== null) {
        runPrefix = prefix;
        runLines = [i];
      }
      continue;
    }
    runLines.push(i);
  }
  close();
  if (confirmed.size > 0) {
    for (let i = 0; i < lines.length; i++) {
      const prefix = marks[i] === 1 ? null : prefixOf(lines[i] ?? '');
      if (prefix !== null && confirmed.has(prefix)) marks[i] = 1;
    }
  }
  return marks;
}

// Reply prefixes as clients write them ("Re:", "AW:", "SV:", "Odp:", "回复:" …), lower-case.
const REPLY_PREFIXES = [
  're',
  'aw',
  'sv',
  'vs',
  'odp',
  'ynt',
  'antw',
  'rif',
  'r',
  'res',
  'ref',
  'réf',
  'απ',
  'σχετ',
  'отв',
  'ответ',
  'відп',
  '回复',
  '回覆',
  '答复',
  '返信',
  '답장',
  'رد',
  'השב',
  'tr',
];
const REPLY_SUBJECT = new RegExp(`^(?:${REPLY_PREFIXES.join('|')})(?:\\[\\d{1,3}\\])?\\s*[:：]`, 'u');

/** True when a quoted Subject value is a reply's ("Re: …", "AW: …", "Odp: …"). */
export function isReplySubject(subject: string): boolean {
  return REPLY_SUBJECT.test(subject.trim().toLowerCase());
}
