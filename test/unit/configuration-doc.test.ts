import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../../src/config.ts';

/** The variable names in the first column of the page's tables (a row may name several). */
async function documentedSettings(): Promise<string[]> {
  const page = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  return page
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
}

describe('docs/configuration.md', () => {
  it('lists every setting of the config schema, once, and nothing else', async () => {
    const documented = await documentedSettings();
    const duplicates = documented.filter((name, i) => documented.indexOf(name) !== i);
    expect(duplicates, 'listed twice').toEqual([]);
    expect(
      SETTING_NAMES.filter((name) => !documented.includes(name)),
      'in src/config.ts, missing from docs/configuration.md',
    ).toEqual([]);
    expect(
      documented.filter((name) => !SETTING_NAMES.includes(name)),
      'in docs/configuration.md, not a setting',
    ).toEqual([]);
  });
});
