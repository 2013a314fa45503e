import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .filter((f) => !f.includes('/generated/'));
}

/** Every module a file imports, as a path relative to the repository root. */
async function importsOf(file: string): Promise<string[]> {
  const text = await readFile(path.join(root, file), 'utf8');
  return [...text.matchAll(/\bfrom\s+'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/g)].map((m) =>
    path.relative(root, path.resolve(path.dirname(path.join(root, file)), m[1] ?? m[2]!)),
  );
}

describe('layers', () => {
  it('src/ never imports from workers/ (entry points are wiring, nothing depends on them)', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles('src'))
      for (const target of await importsOf(file)) if (target.startsWith('workers/')) offenders.push(`${file} -> ${target}`);
    expect(offenders).toEqual([]);
  });

  it('the pure cores (src/mail, src/memory) import no adapter, store, queue or app module', async () => {
    const offenders: string[] = [];
    const allowed = (target: string) =>
      /^src\/(mail|memory)\//.test(target) || ['src/duration.ts', 'src/errors.ts', 'src/ids.ts'].includes(target);
    for (const dir of ['src/mail', 'src/memory']) {
      for (const file of await sourceFiles(dir))
        for (const target of await importsOf(file)) if (!allowed(target)) offenders.push(`${file} -> ${target}`);
    }
    expect(offenders).toEqual([]);
  });

  it('the quiet rule is written once: only src/memory/promotion-schedule.ts adds QUIET_AFTER to a message time', async () => {
    const offenders: string[] = [];
    for (const file of [...(await sourceFiles('src')), ...(await sourceFiles('bench'))]) {
      if (file === 'src/memory/promotion-schedule.ts') continue;
      const text = await readFile(path.join(root, file), 'utf8');
      if (/lastMessageAt\.getTime\(\)\s*\+\s*[\w.]*quietAfter/i.test(text)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
