/**
 * `npx tsx bench/markdown-import.ts`: how the knowledge import's Markdown reading grows on crafted
 * input (test/support/crafted-markdown.ts: runs of spaces, `[`, `*`, `>`, backticks, nested
 * lists, HTML), as ratios against ordinary help-center Markdown of the same size read in the same
 * run, and the time of a whole `kb import` of the 64 KB crafted file into embedded PGlite.
 *
 * Linear reading means: crafted ≈ a small constant × ordinary at every size, and 4× the input
 * costs about 4× the time. Prints a table; asserts nothing (see bench/README.md).
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importKnowledge } from '../src/app/import-knowledge.ts';
import { parseKbDocument } from '../src/memory/knowledge.ts';
import { openMemoryDatabase } from '../src/store/database.ts';
import { applyMigrations } from '../src/store/migrator.ts';
import { craftedMarkdown } from '../test/support/crafted-markdown.ts';
import { KNOWLEDGE_DOCS } from '../test/support/knowledge-questions.ts';

const SIZES = [16_384, 65_536, 262_144] as const;
const RUNS = 5;

function medianMs(work: () => void): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    work();
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
}

/** The fixture help center's Markdown, repeated to `bytes` characters. */
async function ordinaryMarkdown(bytes: number): Promise<string> {
  const files = (await readdir(KNOWLEDGE_DOCS, { recursive: true })).filter((f) => f.endsWith('.md')).sort();
  const texts = await Promise.all(files.map((f) => readFile(path.join(KNOWLEDGE_DOCS, f), 'utf8')));
  const body = texts.map((t) => t.replace(/^---\n[\s\S]*?\n---\n/, '')).join('\n\n');
  return body.repeat(Math.ceil(bytes / body.length)).slice(0, bytes);
}

/** A whole `kb import` of `markdown` as one file, after a first import of `warmUp` (the database's first queries compile). */
async function importMs(markdown: string, warmUp: string): Promise<{ ms: number; passages: number }> {
  const database = await openMemoryDatabase();
  const folder = await mkdtemp(path.join(tmpdir(), 'bench-md-'));
  try {
    await applyMigrations(database.adapterFactory);
    await writeFile(path.join(folder, 'warm-up.md'), warmUp);
    await importKnowledge(database.prisma, [path.join(folder, 'warm-up.md')]);
    await writeFile(path.join(folder, 'crafted.md'), markdown);
    const start = performance.now();
    const report = await importKnowledge(database.prisma, [path.join(folder, 'crafted.md')]);
    return { ms: performance.now() - start, passages: report.passages };
  } finally {
    await database.close();
    await rm(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: string[] = ['size      ordinary ms  crafted ms  crafted/ordinary  crafted growth (×4 input)'];
  let previous: number | null = null;
  // Warm-up: the first calls compile the parser's and the tokenizer's code.
  for (let i = 0; i < 3; i++) parseKbDocument(craftedMarkdown(16_384) + (await ordinaryMarkdown(16_384)), 'markdown', 'x');
  for (const size of SIZES) {
    const ordinary = await ordinaryMarkdown(size);
    const crafted = craftedMarkdown(size);
    const base = medianMs(() => parseKbDocument(ordinary, 'markdown', 'x'));
    const ms = medianMs(() => parseKbDocument(crafted, 'markdown', 'x'));
    const growth = previous === null ? '—' : `${(ms / previous).toFixed(2)}×`;
    rows.push(
      `${String(size).padEnd(9)} ${base.toFixed(1).padStart(11)}  ${ms.toFixed(1).padStart(10)}  ${(ms / base).toFixed(2).padStart(16)}  ${growth.padStart(8)}`,
    );
    previous = ms;
  }
  const ordinary = await importMs(await ordinaryMarkdown(65_536), await ordinaryMarkdown(4_096));
  const crafted = await importMs(craftedMarkdown(65_536), await ordinaryMarkdown(4_096));
  rows.push(
    `kb import into PGlite, 64 KB: ordinary ${ordinary.ms.toFixed(0)} ms (${ordinary.passages} passages), ` +
      `crafted ${crafted.ms.toFixed(0)} ms (${crafted.passages} passages), ratio ${(crafted.ms / ordinary.ms).toFixed(2)} (target: crafted < 1000 ms)`,
  );
  console.log(rows.join('\n'));
}

await main();
