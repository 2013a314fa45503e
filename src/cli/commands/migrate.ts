import { loadConfig } from '../../config.ts';
import { openDatabase } from '../../store/database.ts';
import { applyMigrations } from '../../store/migrator.ts';

export async function runMigrate(): Promise<void> {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    const applied = await applyMigrations(db.adapterFactory);
    process.stdout.write(
      applied.length === 0
        ? `Database at ${db.location} is up to date.\n`
        : `Applied ${applied.length} migration(s) to ${db.location}: ${applied.join(', ')}\n`,
    );
  } finally {
    await db.close();
  }
}
