/**
 * Only `src/store/` talks to the ORM: no Prisma model call (`db.draft.findMany(...)`), no raw query
 * or transaction (`$transaction`, `$queryRaw`...) and no import of the generated client anywhere
 * else in `src/` or `workers/`. Files still being moved are listed by name; the list can only shrink.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** Files that may call Prisma directly outside src/store/ (none: every call has moved there). */
const ALLOWED: Record<string, string> = {};

const MODEL_METHODS = [
  'findMany',
  'findUnique',
  'findUniqueOrThrow',
  'findFirst',
  'findFirstOrThrow',
  'create',
  'createMany',
  'createManyAndReturn',
  'update',
  'updateMany',
  'upsert',
  'delete',
  'deleteMany',
  'count',
  'aggregate',
  'groupBy',
];
const CLIENT_METHODS = ['$transaction', '$queryRaw', '$executeRaw', '$queryRawUnsafe', '$executeRawUnsafe'];

const root = path.resolve(import.meta.dirname, '../..');

/** Model names of prisma/schema.prisma as the client spells its properties (`ProfileFact` -> `profileFact`). */
async function modelProperties(): Promise<string[]> {
  const schema = await readFile(path.join(root, 'prisma/schema.prisma'), 'utf8');
  return [...schema.matchAll(/^model\s+(\w+)\s*\{/gm)].map((m) => m[1]!.charAt(0).toLowerCase() + m[1]!.slice(1));
}

const escape = (s: string) => s.replace(/[$]/g, '\\$');

/** The ORM uses in one file's text, as `line: match`. */
function ormUses(text: string, models: readonly string[]): string[] {
  const patterns = [
    // `x.draft.findMany(`, also split over lines or with optional chaining.
    new RegExp(`\\??\\.\\s*(?:${models.join('|')})\\s*\\??\\.\\s*(?:${MODEL_METHODS.join('|')})\\s*\\(`, 'g'),
    new RegExp(`(?:${CLIENT_METHODS.map(escape).join('|')})(?![\\w$])`, 'g'),
    /['"][^'"\n]*generated\/prisma[^'"\n]*['"]/g,
  ];
  const found: Array<{ at: number; match: string }> = [];
  for (const pattern of patterns) {
    for (const m of text.matchAll(pattern)) found.push({ at: m.index, match: m[0].replace(/\s+/g, '') });
  }
  return found.sort((a, b) => a.at - b.at).map((f) => `${text.slice(0, f.at).split('\n').length}: ${f.match}`);
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { withFileTypes: true, recursive: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .filter((file) => !file.startsWith('src/store/') && !file.startsWith('src/generated/'));
}

async function usesByFile(): Promise<Map<string, string[]>> {
  const models = await modelProperties();
  const files = [...(await sourceFiles('src')), ...(await sourceFiles('workers'))];
  const uses = new Map<string, string[]>();
  for (const file of files) {
    const found = ormUses(await readFile(path.join(root, file), 'utf8'), models);
    if (found.length > 0) uses.set(file, found);
  }
  return uses;
}

describe('ORM boundary', () => {
  it('reads every model of the schema', async () => {
    const models = await modelProperties();
    expect(models).toContain('draft');
    expect(models).toContain('profileFact');
    expect(models).toContain('consoleSession');
    expect(models.length).toBeGreaterThanOrEqual(19);
  });

  it('recognises model calls, client calls and imports of the generated client', () => {
    const models = ['draft', 'profileFact', 'consoleSession', 'thread', 'entity'];
    const found = (text: string) => ormUses(text, models).map((u) => u.replace(/^\d+: /, ''));
    expect(found('await db.draft.findMany({ where })')).toEqual(['.draft.findMany(']);
    expect(found('await tx.profileFact.create({ data })')).toEqual(['.profileFact.create(']);
    expect(found('this.db.consoleSession.deleteMany({})')).toEqual(['.consoleSession.deleteMany(']);
    expect(found("c.get('runtime').db.thread.findUniqueOrThrow({})")).toEqual(['.thread.findUniqueOrThrow(']);
    expect(found('runtime.db\n  .draft\n  .groupBy({ by })')).toEqual(['.draft.groupBy(']);
    expect(found('db?.entity?.count()')).toEqual(['?.entity?.count(']);
    expect(found('await db.$transaction(async (tx) => tx.draft.update({}))')).toEqual(['$transaction', '.draft.update(']);
    expect(found('db.$queryRaw`SELECT 1`; db.$executeRawUnsafe(sql)')).toEqual(['$queryRaw', '$executeRawUnsafe']);
    expect(found("import type { Prisma } from '../../generated/prisma/client.ts';")).toEqual(["'../../generated/prisma/client.ts'"]);
    expect(found('const { PrismaClient } = await import("../generated/prisma/client.ts")')).toEqual(['"../generated/prisma/client.ts"']);
    // Look-alikes that are not ORM calls.
    expect(found("createHash('sha256').update(token).digest('hex')")).toEqual([]);
    expect(found('thread.entity.name; draft.turn.messages.map(render)')).toEqual([]);
    expect(found('queues.turns.add(job); session.create(); db.drafts.findMany()')).toEqual([]);
    expect(found('loadThread(db, id); store.$transactions')).toEqual([]);
  });

  it('only src/store/ calls the ORM (apart from the files still being moved)', async () => {
    const uses = await usesByFile();
    const offenders = [...uses].filter(([file]) => !(file in ALLOWED)).map(([file, found]) => `${file}:${found.join(', ')}`);
    expect(offenders).toEqual([]);
  });

  it('every allow-listed file still calls the ORM: a file that no longer does leaves the list', async () => {
    const uses = await usesByFile();
    expect(Object.keys(ALLOWED).filter((file) => !uses.has(file))).toEqual([]);
  });
});
