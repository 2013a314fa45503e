/**
 * A fresh PostgreSQL database per test file, on the machine's real server, dropped afterwards.
 * TEST_POSTGRES_URL points at a database the tests may connect to for CREATE DATABASE.
 *
 * Migrated databases are cloned (`CREATE DATABASE … TEMPLATE …`, a file copy on the server) from
 * a template migrated once per migrations folder: its name carries a hash of prisma/migrations, so
 * a branch with a new migration builds (once) a template of its own. The integration project's
 * global setup builds it before the workers start; a process that finds none builds it itself.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/store/database.ts';
import { applyMigrations, MIGRATIONS_DIR } from '../../src/store/migrator.ts';

export const ADMIN_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(run: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    return await run(admin);
  } finally {
    await admin.end();
  }
}

/** A hash of every file under prisma/migrations (names and contents), the template's identity. */
export async function migrationsHash(): Promise<string> {
  const hash = createHash('sha256');
  const entries = await readdir(MIGRATIONS_DIR, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(MIGRATIONS_DIR, path.join(entry.parentPath, entry.name)))
    .sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(await readFile(path.join(MIGRATIONS_DIR, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

async function databaseExists(name: string): Promise<boolean> {
  return withAdmin(async (admin) => (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);
}

/**
 * Migrates a database under a temporary name and renames it to the template's: the rename is
 * atomic, so a concurrent builder (another worker, another checkout) either wins or drops its copy.
 */
async function buildTemplate(name: string): Promise<void> {
  const building = await createTestDatabase();
  try {
    const database = await openDatabase({ databaseUrl: building.url, dataDir: '/nonexistent' });
    try {
      await applyMigrations(database.adapterFactory);
    } finally {
      await database.close();
    }
    await withAdmin((admin) => admin.query(`ALTER DATABASE "${building.name}" RENAME TO "${name}"`));
  } catch (error) {
    await building.drop();
    if (!(await databaseExists(name))) throw error;
  }
}

let template: Promise<string> | undefined;

/** The migrated template database's name, built first if this migrations folder has none yet. */
export function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `sa_template_${await migrationsHash()}`;
    if (!(await databaseExists(name))) await buildTemplate(name);
    return name;
  })();
  template.catch(() => {
    template = undefined;
  });
  return template;
}

/** Creates the database, retrying while the template is briefly busy (PostgreSQL refuses a copy then). */
async function createDatabase(name: string, templateName: string | undefined): Promise<void> {
  const sql = templateName ? `CREATE DATABASE "${name}" TEMPLATE "${templateName}"` : `CREATE DATABASE "${name}"`;
  for (let attempt = 1; ; attempt += 1) {
    try {
      await withAdmin((admin) => admin.query(sql));
      return;
    } catch (error) {
      const busy = error instanceof Error && /is being accessed by other users/.test(error.message);
      if (!busy || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/**
 * A new database: empty by default (for tests of migrating itself), or `{ migrated: true }` a
 * clone of the migrated template (what the runtime's own migrate step then finds up to date).
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `sa_test_${randomBytes(6).toString('hex')}`;
  await createDatabase(name, options.migrated ? await migratedTemplate() : undefined);
  return {
    url: databaseUrl(name),
    name,
    drop: () => withAdmin(async (admin) => void (await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))),
  };
}

/** A fresh, migrated PostgreSQL database (a clone of the template) with its Prisma client. */
export async function createMigratedDatabase(): Promise<{ database: Database; testDb: TestDatabase; cleanup(): Promise<void> }> {
  const testDb = await createTestDatabase({ migrated: true });
  const database = await openDatabase({ databaseUrl: testDb.url, dataDir: '/nonexistent' });
  return {
    database,
    testDb,
    cleanup: async () => {
      await database.close();
      await testDb.drop();
    },
  };
}
