#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx: the product has no build step.
import { existsSync } from 'node:fs';
import { register } from 'tsx/esm/api';

// Settings may live in ./.env; a variable already in the environment wins over the file.
if (existsSync('.env')) {
  try {
    process.loadEnvFile('.env');
  } catch (error) {
    process.stderr.write(`support-agent: .env: cannot read it (${error instanceof Error ? error.message.split('\n')[0] : 'error'})\n`);
    process.exit(2);
  }
}
register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
