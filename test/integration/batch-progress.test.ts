/**
 * `kb import` and `erase` report their progress as they go (issue 31, item 8): the use cases call
 * back after each file and each erasure step, so the command draws count, rate and time left.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eraseCustomer } from '../../src/app/erase-customer.ts';
import { importKnowledge } from '../../src/app/import-knowledge.ts';
import type { Database } from '../../src/store/database.ts';
import { resolveEntity } from '../../src/store/entities.ts';
import { openMigratedMemoryDatabase } from '../support/pglite.ts';

const DOCS = path.resolve(import.meta.dirname, '../../fixtures/knowledge/docs');
let database: Database;

beforeAll(async () => {
  database = await openMigratedMemoryDatabase();
}, 120_000);
afterAll(async () => {
  await database?.close();
});

describe('progress of batch commands', () => {
  it('kb import calls back once per file, ending at the total', async () => {
    const calls: Array<[number, number]> = [];
    const report = await importKnowledge(database.prisma, [DOCS], { progress: (done, total) => calls.push([done, total]) });
    const files = report.created.length + report.updated.length + report.unchanged.length + report.skipped.length;
    expect(files).toBeGreaterThan(10);
    expect(calls).toEqual(Array.from({ length: files }, (_, i) => [i + 1, files]));
  });

  it('erase calls back after each of its four steps', async () => {
    const entity = await resolveEntity(database.prisma, 'dana@example.com', { kind: 'person', key: 'dana@example.com' }, 'Dana');
    const calls: Array<[number, number]> = [];
    const report = await eraseCustomer(database.prisma, null, entity.id, (done, total) => calls.push([done, total]));
    expect(report.entityId).toBe(entity.id);
    expect(calls).toEqual([
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
    ]);
  });
});
