/**
 * DATA_DIR is private: the embedded database opened with the usual umask 022 leaves no file or
 * folder that another user could read or write (PGlite itself unpacks its files mode 0666); an
 * existing looser folder is tightened; a folder of another user, or a file, is refused.
 */
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.ts';
import { applyMigrations } from '../../src/store/migrator.ts';

/** Every entry under `root` (and root) whose mode lets group or others in, as "path mode". */
async function looseEntries(root: string): Promise<string[]> {
  const loose: string[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    for (const entry of [dir, ...(await readdir(dir)).map((e) => path.join(dir, e))]) {
      const info = await lstat(entry);
      if (entry !== dir && info.isDirectory()) pending.push(entry);
      if (entry === dir || !info.isDirectory())
        if (info.mode & 0o077) loose.push(`${path.relative(root, entry)} ${(info.mode & 0o777).toString(8)}`);
    }
  }
  return loose;
}

async function countFiles(root: string): Promise<number> {
  return (await readdir(root, { recursive: true })).length;
}

const asRoot = process.getuid?.() === 0;

describe('DATA_DIR permissions with the embedded database (umask 022)', () => {
  let base: string;
  let umask: number;
  beforeAll(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'data-dir-'));
  });
  afterAll(async () => {
    if (base) await rm(base, { recursive: true, force: true });
  });
  beforeEach(() => {
    umask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(umask);
  });

  it('a new DATA_DIR is created 0700 and every file of the database is 0600, open and after close', async () => {
    const dataDir = path.join(base, 'new', 'data');
    const database = await openDatabase({ databaseUrl: undefined, dataDir });
    try {
      await applyMigrations(database.adapterFactory);
      await database.sql.query('CHECKPOINT');
      expect((await lstat(dataDir)).mode & 0o777).toBe(0o700);
      expect(await countFiles(dataDir)).toBeGreaterThan(900);
      expect(await looseEntries(dataDir)).toEqual([]);
    } finally {
      await database.close();
    }
    expect(await looseEntries(dataDir)).toEqual([]);
  }, 90_000);

  it('an existing looser DATA_DIR and its database files are tightened on opening', async () => {
    const dataDir = path.join(base, 'new', 'data');
    const file = path.join(dataDir, 'pglite', 'PG_VERSION');
    await chmod(file, 0o666);
    await chmod(path.join(dataDir, 'pglite', 'base'), 0o777);
    await chmod(dataDir, 0o755);
    expect(await looseEntries(dataDir)).toHaveLength(3);
    const database = await openDatabase({ databaseUrl: undefined, dataDir, existing: 'require' });
    expect(await looseEntries(dataDir)).toEqual([]);
    await database.close();
  }, 60_000);

  it('a DATA_DIR reached through a symbolic link makes the folder it names private', async () => {
    const target = path.join(base, 'new', 'data');
    await chmod(target, 0o777);
    await symlink(target, path.join(base, 'link'));
    const database = await openDatabase({ databaseUrl: undefined, dataDir: path.join(base, 'link'), existing: 'require' });
    await database.close();
    expect((await lstat(target)).mode & 0o777).toBe(0o700);
  }, 60_000);

  it('a DATA_DIR that is a file is refused with a clear message', async () => {
    const file = path.join(base, 'a-file');
    await writeFile(file, 'not a folder');
    await expect(openDatabase({ databaseUrl: undefined, dataDir: file })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('is not a folder'),
    });
  });

  it.skipIf(!asRoot)('a DATA_DIR that belongs to another user is refused, naming the owner, and left as it was', async () => {
    const dataDir = path.join(base, 'someone-else');
    await mkdir(dataDir, { mode: 0o755 });
    await chmod(dataDir, 0o755);
    await chown(dataDir, 4242, 4242);
    await expect(openDatabase({ databaseUrl: undefined, dataDir })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('belongs to user 4242'),
    });
    expect((await lstat(dataDir)).mode & 0o777).toBe(0o755);
    expect(await readdir(dataDir)).toEqual([]);
  });
});
