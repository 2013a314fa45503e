/**
 * `kb import` and the console's upload of crafted Markdown (runs of spaces, `[`, `*`, `>`,
 * backticks, nested lists, HTML): both read it whole through the CommonMark parser and store its
 * passages with their heading paths. Before the parser, 6 KB of such input took 79 s: this file
 * would then time out (the timing figure itself is in bench/markdown-import.ts, not asserted here).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKnowledge, importKnowledgeUpload } from '../../src/app/import-knowledge.ts';
import { openMemoryDatabase, type Database } from '../../src/store/database.ts';
import { loadKbDocument } from '../../src/store/knowledge.ts';
import { applyMigrations } from '../../src/store/migrator.ts';
import { craftedMarkdown, HOSTILE_MARKDOWN } from '../support/crafted-markdown.ts';

describe('crafted Markdown in the knowledge import (PGlite)', () => {
  let database: Database;
  let folder: string;
  beforeAll(async () => {
    database = await openMemoryDatabase();
    await applyMigrations(database.adapterFactory);
    folder = await mkdtemp(path.join(tmpdir(), 'kb-crafted-'));
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('kb import reads a 64 KB crafted file and stores its passages under their headings', async () => {
    await writeFile(path.join(folder, 'crafted.md'), craftedMarkdown(65_536));
    const report = await importKnowledge(database.prisma, [folder]);
    expect(report).toMatchObject({ created: ['crafted.md'], skipped: [] });
    const doc = await loadKbDocument(database.prisma, 'crafted.md');
    const paths = new Set(doc?.passageList.map((p) => p.titlePath));
    expect(paths).toContain('Part 0');
    expect(paths).toContain('Part 10');
    expect(doc?.passageList.map((p) => p.text).join('\n')).toContain('Plain text of part 10.');
  });

  it.each(['heading with a run of spaces', 'run of [', 'alternating *a', 'run of >', 'emphasis around links'])(
    'the console upload reads 16 KB of "%s" and the text after it',
    async (name) => {
      const markdown = `# Intro\n\nBefore.\n\n${HOSTILE_MARKDOWN[name]!(16_384)}\n\n# Closing\n\nAfter the hostile part.\n`;
      const upload = { name: `${name.replace(/\W+/g, '-')}.md`, bytes: new TextEncoder().encode(markdown) };
      const report = await importKnowledgeUpload(database.prisma, upload);
      expect(report.skipped).toEqual([]);
      const doc = await loadKbDocument(database.prisma, upload.name);
      expect(doc?.passageList.find((p) => p.titlePath === 'Closing')?.text).toBe('After the hostile part.');
    },
  );
});
