import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !path.join(e.parentPath, e.name).includes('/generated/'))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('configuration boundary', () => {
  it('only src/config.ts reads process.env', async () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const files = [...(await sourceFiles(path.join(root, 'src'))), ...(await sourceFiles(path.join(root, 'workers')).catch(() => []))];
    const offenders: string[] = [];
    for (const file of files) {
      if (file.endsWith(path.join('src', 'config.ts'))) continue;
      if ((await readFile(file, 'utf8')).includes('process.env')) offenders.push(path.relative(root, file));
    }
    expect(offenders).toEqual([]);
  });
});
