/**
 * A fresh PostgreSQL database per test file, on the machine's real server, dropped afterwards.
 * TEST_POSTGRES_URL points at a database the tests may connect to for CREATE DATABASE.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/store/database.ts';
import { applyMigrations } from '../../src/store/migrator.ts';

export const ADMIN_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `sa_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A fresh, migrated PostgreSQL database with its Prisma client. */
export async function createMigratedDatabase(): Promise<{ database: Database; testDb: TestDatabase; cleanup(): Promise<void> }> {
  const testDb = await createTestDatabase();
  const database = await openDatabase({ databaseUrl: testDb.url, dataDir: '/nonexistent' });
  await applyMigrations(database.adapterFactory);
  return {
    database,
    testDb,
    cleanup: async () => {
      await database.close();
      await testDb.drop();
    },
  };
}
