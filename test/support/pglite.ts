/**
 * The embedded database (PGlite in memory) already migrated: started from a dump of a migrated
 * data directory instead of an empty cluster plus the schema engine (about a quarter of the time).
 * The dump is made once per migrations folder (its name carries the same hash as the PostgreSQL
 * template) in the OS temp folder, by the integration project's global setup or the first process
 * that needs it, and read once per worker.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { openMemoryDatabase, type Database } from '../../src/store/database.ts';
import { applyMigrations } from '../../src/store/migrator.ts';
import { migrationsHash } from './postgres.ts';

async function dumpFile(): Promise<string> {
  return path.join(tmpdir(), `sa-test-pglite-${await migrationsHash()}.tar`);
}

async function buildDump(file: string): Promise<void> {
  const pglite = await PGlite.create();
  try {
    await applyMigrations(new PrismaPGlite(pglite));
    const dump = await pglite.dumpDataDir('none');
    // Written under another name and renamed: a concurrent reader never sees half a file.
    const partial = `${file}.${randomBytes(4).toString('hex')}.partial`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, file).catch(async (error: unknown) => {
      await rm(partial, { force: true });
      throw error;
    });
  } finally {
    await pglite.close();
  }
}

let dump: Promise<Blob> | undefined;

/** The migrated data directory as PGlite's `loadDataDir` takes it, built first if missing. */
export function migratedPgliteDump(): Promise<Blob> {
  dump ??= (async () => {
    const file = await dumpFile();
    const bytes = await readFile(file).catch(async () => {
      await buildDump(file);
      return readFile(file);
    });
    return new Blob([bytes]);
  })();
  dump.catch(() => {
    dump = undefined;
  });
  return dump;
}

/** A new in-memory PGlite database with every migration applied, closed by `close()`. */
export async function openMigratedMemoryDatabase(): Promise<Database> {
  return openMemoryDatabase({ loadDataDir: await migratedPgliteDump() });
}
