/**
 * The Prisma client factory: embedded PGlite in DATA_DIR by default, PostgreSQL when DATABASE_URL
 * is set. Both speak PostgreSQL, so one schema and one migration history serve both.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { AppError } from '../errors.ts';
import { PrismaClient } from '../generated/prisma/client.ts';
import { SchemaEnginePool } from './postgres-pool.ts';
import { acquireDirectoryLock, type DirectoryLock } from './directory-lock.ts';
import { ensurePrivateDirectory, PRIVATE_DIR_MODE, tightenTree } from './private-files.ts';
import { pgliteSql, postgresSql, type SqlExecutor } from './sql.ts';

export type Db = InstanceType<typeof PrismaClient>;

export interface Database {
  prisma: Db;
  /** Plain SQL on the same database, for ingestion's hot path. */
  sql: SqlExecutor;
  /** The same database as a migration-aware driver adapter, for the schema engine. */
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  kind: 'pglite' | 'postgresql';
  /** Where the data lives, for messages (the PostgreSQL URL without its password). */
  location: string;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  /** Connections in the PostgreSQL pool Prisma and plain SQL share (default 10). */
  databasePoolSize?: number;
  /**
   * For the embedded database: `create` it when DATA_DIR has none (the default), `require` one
   * (operator commands: an empty folder is a mistake, not a customer without data), or `refuse`
   * one (a replay keeping its database needs a new folder).
   */
  existing?: 'create' | 'require' | 'refuse';
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.databasePoolSize ?? 10)
    : openPglite(options.dataDir, options.existing ?? 'create');
}

/** Whether DATA_DIR holds an embedded database (PGlite writes PG_VERSION when it creates one). */
export function embeddedDatabaseExists(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'pglite', 'PG_VERSION'));
}

function openPostgres(url: string, poolSize: number): Database {
  // One pool for Prisma and plain SQL, so ingestion adds no connections.
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // The pool drops a connection the server closed while idle; the next query reports the outage.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const schemaEnginePool = new SchemaEnginePool({ connectionString: url, max: 2, idleTimeoutMillis: 1000 });
  return {
    prisma,
    sql: postgresSql(pool),
    adapterFactory: new PrismaPg(schemaEnginePool),
    kind: 'postgresql',
    location: redactUrl(url),
    close: async () => {
      await prisma.$disconnect();
      await pool.end();
      await schemaEnginePool.end();
    },
  };
}

async function openPglite(dataDir: string, existing: 'create' | 'require' | 'refuse'): Promise<Database> {
  const dir = path.join(dataDir, 'pglite');
  if (existing === 'require' && !embeddedDatabaseExists(dataDir)) {
    throw new AppError(
      'NOT_FOUND',
      `no database in DATA_DIR=${dataDir}: set DATA_DIR to the folder the agent (or \`replay --data-dir\`) used, or DATABASE_URL`,
    );
  }
  if (existing === 'refuse' && embeddedDatabaseExists(dataDir)) {
    throw new AppError('USAGE', `${dataDir} already holds a database: give a new or empty folder`);
  }
  await ensurePrivateDirectory(dataDir);
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // PGlite is one process's database; a second process on the same folder would corrupt it.
  const lock: DirectoryLock = await acquireDirectoryLock(dataDir, 'pglite');
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dir);
  } catch (error) {
    await lock.release();
    throw new AppError('DB_UNAVAILABLE', `Cannot open the embedded database in ${dir}`, { cause: error });
  }
  try {
    // PGlite unpacks its template database mode 0666 whatever the umask.
    await tightenTree(dir);
  } catch (error) {
    await pglite.close();
    await lock.release();
    throw error;
  }
  const adapterFactory = new PrismaPGlite(pglite);
  const prisma = new PrismaClient({ adapter: adapterFactory });
  return {
    prisma,
    sql: pgliteSql(pglite),
    adapterFactory,
    kind: 'pglite',
    location: dir,
    close: async () => {
      await prisma.$disconnect();
      await pglite.close();
      // Files PGlite's own C library wrote meanwhile (with its built-in umask 022).
      await tightenTree(dir);
      await lock.release();
    },
  };
}

/**
 * An in-memory PGlite database, for replay and tests that need no persistence. `loadDataDir`
 * starts it from a dump of a data directory (PGlite's dumpDataDir) instead of an empty cluster.
 */
export async function openMemoryDatabase(options: { loadDataDir?: Blob } = {}): Promise<Database> {
  const pglite = await PGlite.create(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {});
  const adapterFactory = new PrismaPGlite(pglite);
  const prisma = new PrismaClient({ adapter: adapterFactory });
  return {
    prisma,
    sql: pgliteSql(pglite),
    adapterFactory,
    kind: 'pglite',
    location: 'memory',
    close: async () => {
      await prisma.$disconnect();
      await pglite.close();
    },
  };
}

/** The URL with any password replaced, safe for logs and errors. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable database URL)';
  }
}
