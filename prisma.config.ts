// Configuration for the Prisma CLI (generate; and migrate for users who have internet access).
// The product itself migrates offline with `support-agent migrate` (src/store/migrator.ts).
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
