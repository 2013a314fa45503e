// `npm run db:migration:create -- <name>`: writes prisma/migrations/<timestamp>_<name> from the
// difference between the migrations folder and prisma/schema.prisma, offline.
import { describeError } from '../src/errors.ts';
import { createMigration } from '../src/store/migrator.ts';

const name = process.argv[2];
if (!name) {
  process.stderr.write('usage: npm run db:migration:create -- <name>\n');
  process.exit(2);
}
try {
  const folder = await createMigration(name);
  process.stdout.write(folder ? `Created ${folder}\n` : 'The schema has no changes; no migration created.\n');
} catch (error) {
  process.stderr.write(`${describeError(error)}\n`);
  process.exit(1);
}
