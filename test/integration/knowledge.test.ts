/**
 * The knowledge base on both databases: importing the fixture help center (Markdown, HTML, text,
 * PDF), re-importing (unchanged kept, changed updated, missing pruned), a hostile PDF skipped, and
 * retrieval quality on the labelled questions (recall@5).
 */
import { cp, mkdtemp, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKnowledge } from '../../src/app/import-knowledge.ts';
import { kbQueryTerms } from '../../src/memory/knowledge.ts';
import { type Database } from '../../src/store/database.ts';
import { listKbDocuments, loadKbDocument, searchKbPassages } from '../../src/store/knowledge.ts';
import { KNOWLEDGE_DOCS, knowledgeRecall, offlineDraftGrounding } from '../support/knowledge-questions.ts';
import { createMigratedDatabase } from '../support/postgres.ts';
import { openMigratedMemoryDatabase } from '../support/pglite.ts';

const backends: Array<{ name: string; open: () => Promise<{ database: Database; close: () => Promise<void> }> }> = [
  {
    name: 'PostgreSQL',
    open: async () => {
      const { database, cleanup } = await createMigratedDatabase();
      return { database, close: cleanup };
    },
  },
  {
    name: 'PGlite',
    open: async () => {
      const database = await openMigratedMemoryDatabase();
      return { database, close: () => database.close() };
    },
  },
];

describe.each(backends)('the knowledge base on $name', ({ name, open }) => {
  let database: Database;
  let close: () => Promise<void>;
  let folder: string;
  beforeAll(async () => {
    ({ database, close } = await open());
    folder = await mkdtemp(path.join(tmpdir(), 'kb-'));
    await cp(KNOWLEDGE_DOCS, folder, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await close?.();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('imports every format, keeps heading paths and languages, and reads the PDF', async () => {
    const report = await importKnowledge(database.prisma, [folder], { lang: 'en' });
    expect(report.skipped).toEqual([]);
    expect(report.created).toHaveLength(28);
    const docs = await listKbDocuments(database.prisma);
    expect(docs.map((d) => d.format).sort()).toContain('pdf');
    const pdf = await loadKbDocument(database.prisma, 'legal/data-processing-terms.pdf');
    expect(pdf?.title).toBe('Acme Data Processing Terms');
    expect(pdf?.passageList.map((p) => p.text).join('\n')).toContain('kept in the trash for 30 days');
    const html = await loadKbDocument(database.prisma, 'billing/payment-methods.html');
    expect(html?.passageList.map((p) => p.titlePath)).toEqual([
      'Payment methods > Accepted payment methods',
      'Payment methods > Updating your card',
      'Payment methods > Failed payments',
    ]);
    expect(docs.find((d) => d.source === 'ja/invoice-name.md')?.lang).toBe('ja');
    expect(docs.find((d) => d.source === 'fr/livraison.html')?.lang).toBe('fr');
  });

  it('re-imports: unchanged documents kept, a changed one updated, a missing one pruned, a hostile PDF skipped', async () => {
    const before = await loadKbDocument(database.prisma, 'billing/refunds.md');
    await appendFile(
      path.join(folder, 'exports/excel-export.md'),
      '\n## Scheduled exports\nSchedule a weekly export under Settings > Exports > Schedule.\n',
    );
    await rm(path.join(folder, 'product/webhooks.md'));
    await writeFile(path.join(folder, 'broken.pdf'), Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 0x41)]));
    const report = await importKnowledge(database.prisma, [folder], { prune: true, lang: 'en' });
    expect(report.updated).toEqual(['exports/excel-export.md']);
    expect(report.unchanged).toHaveLength(26);
    expect(report.removed).toBe(1);
    expect(report.skipped.map((s) => s.source)).toEqual(['broken.pdf']);
    const after = await loadKbDocument(database.prisma, 'billing/refunds.md');
    expect(after?.passageList.map((p) => p.id)).toEqual(before?.passageList.map((p) => p.id));
    const found = await searchKbPassages(database.sql, kbQueryTerms('How do I schedule a weekly export?'), 3);
    expect(found[0]?.titlePath).toBe('Exporting reports to Excel and CSV > Scheduled exports');
    expect(await loadKbDocument(database.prisma, 'product/webhooks.md')).toBeNull();
  });

  it('finds a labelled passage in the top 5 for most questions (recall@5)', async () => {
    const fresh = await mkdtemp(path.join(tmpdir(), 'kb-'));
    try {
      await cp(KNOWLEDGE_DOCS, fresh, { recursive: true });
      await importKnowledge(database.prisma, [fresh], { prune: true, lang: 'en' });
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
    const result = await knowledgeRecall(database.sql, 5);
    process.stdout.write(
      `knowledge recall@5 on ${name}: ${result.hits}/${result.answerable} = ${result.recall.toFixed(3)}; misses: ${JSON.stringify(result.misses)}\n`,
    );
    expect(result.answerable).toBeGreaterThanOrEqual(60);
    expect(result.recall).toBeGreaterThanOrEqual(0.85);
    const top1 = await knowledgeRecall(database.sql, 1);
    process.stdout.write(`knowledge recall@1 on ${name}: ${top1.hits}/${top1.answerable} = ${top1.recall.toFixed(3)}\n`);
  });

  it('offline drafts: no unsupported claim for questions without an answer, extractive cited answers for many with one', async () => {
    const result = await offlineDraftGrounding(database.sql, 4);
    process.stdout.write(`offline drafts on ${name}: ${JSON.stringify(result)}\n`);
    expect(result.noAnswerClean).toBe(result.noAnswer);
    expect(result.flagged).toEqual([]);
    expect(result.answeredFromLabel / result.answerable).toBeGreaterThanOrEqual(0.5);
  });
});
