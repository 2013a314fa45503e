import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/database.ts';
import { applyMigrations, diffDatabaseToSchema, MIGRATIONS_DIR, readMigrationList } from '../../src/store/migrator.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function postgres(): Promise<Database> {
  const testDb: TestDatabase = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: testDb.url, dataDir: '/nonexistent' });
  cleanups.push(async () => {
    await db.close();
    await testDb.drop();
  });
  return db;
}

async function pglite(): Promise<Database> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sa-pglite-'));
  const db = await openDatabase({ databaseUrl: undefined, dataDir: dir });
  cleanups.push(async () => {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });
  return db;
}

describe.each([
  ['PostgreSQL', postgres],
  ['PGlite', pglite],
])('migrations on %s', (_name, open) => {
  it('produce exactly the schema, record history like `prisma migrate deploy`, and re-run as a no-op', async () => {
    const db = await open();
    const names = (await readMigrationList()).migrationDirectories.map((d) => d.path);
    expect(await applyMigrations(db.adapterFactory)).toEqual(names);
    expect(await diffDatabaseToSchema(db.adapterFactory)).toBe('');
    expect(await applyMigrations(db.adapterFactory)).toEqual([]);

    const history = await db.prisma.$queryRawUnsafe<Array<{ migration_name: string; finished_at: Date | null; checksum: string }>>(
      'SELECT migration_name, finished_at, checksum FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(history.map((row) => row.migration_name)).toEqual(names);
    expect(history.every((row) => row.finished_at !== null && /^[0-9a-f]{64}$/.test(row.checksum))).toBe(true);
  });

  it('detects drift when the database differs from the schema', async () => {
    const db = await open();
    await applyMigrations(db.adapterFactory);
    await db.prisma.$executeRawUnsafe('ALTER TABLE "Entity" ADD COLUMN "unexpected" INTEGER');
    expect(await diffDatabaseToSchema(db.adapterFactory)).toMatch(/DROP COLUMN "unexpected"/);
  });
});

describe('migration files', () => {
  it('are locked to PostgreSQL for the Prisma CLI', async () => {
    expect(await readFile(path.join(MIGRATIONS_DIR, 'migration_lock.toml'), 'utf8')).toMatch(/provider = "postgresql"/);
  });
});
