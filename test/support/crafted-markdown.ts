/**
 * Markdown built to make a backtracking or quadratic reader stall: runs of spaces after a heading
 * mark, runs of `[`, `*`, `_`, `>` and backticks, deep and wide lists, unclosed HTML and comments,
 * image and link openers that never close. Used by the knowledge tests and bench/markdown-import.ts.
 */

/** One hostile pattern, `size` characters long (about). */
export const HOSTILE_MARKDOWN: Record<string, (size: number) => string> = {
  'heading with a run of spaces': (n) => `# a${' '.repeat(n)}x\n`,
  'heading with a run of " #"': (n) => `## a${' #'.repeat(n >> 1)} x\n`,
  'run of [': (n) => '['.repeat(n),
  'run of [a](': (n) => '[a]('.repeat(n >> 2),
  'run of ![[': (n) => '!['.repeat(n >> 1),
  'run of *': (n) => `${'*'.repeat(n)}a`,
  'alternating *a': (n) => '*a'.repeat(n >> 1),
  'alternating _a': (n) => '_a'.repeat(n >> 1),
  'run of >': (n) => `${'>'.repeat(n)} a`,
  'quote levels line by line': (n) => lines(n, (i) => `${'>'.repeat(i % 40)} a`),
  'run of backticks': (n) => `${'`'.repeat(n >> 1)}a${'``'.repeat(n >> 2)}`,
  'alternating a`': (n) => 'a`'.repeat(n >> 1),
  'nested lists': (n) => lines(n, (i) => `${'  '.repeat(i % 45)}- item ${i}`),
  'ordered lists in quotes': (n) => lines(n, (i) => `${'> '.repeat(i % 20)}${i % 9}. step`),
  'unclosed HTML tags': (n) => '<a '.repeat(Math.floor(n / 3)),
  'emphasis around links': (n) => '*['.repeat(n >> 2) + '](x)*'.repeat(Math.floor(n / 10)),
  'table with many columns': (n) => ['|a'.repeat(n / 6), '|-'.repeat(n / 6), '|x'.repeat(n / 6)].join('\n'),
  'reference definitions': (n) => lines(n >> 1, (i) => `[r${i}]: <http://e.example/${i}`) + '[r1]'.repeat(n >> 3),
  'run of backslashes and &': (n) => '\\&#'.repeat(Math.floor(n / 3)),
  // These two end the document by design: CommonMark runs an HTML comment block to its "-->" (or
  // the end), and markdown-it skips the rest past its nesting cap (a cut mark says so).
  'lists nested past the cap': (n) => lines(n, (i) => `${'  '.repeat(i % 80)}- item ${i}`),
  'unclosed comments': (n) => '<!--'.repeat(n >> 2),
};

/** Patterns after which nothing more of the document is read (see above). */
export const SWALLOWING = new Set(['lists nested past the cap', 'unclosed comments']);

function lines(size: number, line: (i: number) => string): string {
  const out: string[] = [];
  let length = 0;
  for (let i = 0; length < size; i++) {
    const next = line(i);
    out.push(next);
    length += next.length + 1;
  }
  return out.join('\n');
}

/** A document of about `bytes` characters: every hostile pattern in turn, each under its own heading. */
export function craftedMarkdown(bytes: number): string {
  const names = Object.keys(HOSTILE_MARKDOWN);
  const each = Math.floor(bytes / names.length) - 60;
  return names.map((name, i) => `# Part ${i}\n\nPlain text of part ${i}.\n\n${HOSTILE_MARKDOWN[name]!(each)}\n\n`).join('');
}
