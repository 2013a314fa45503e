/**
 * `support-agent import`: trusted facts from a CRM export, keyed by email address. The accepted
 * shapes are listed in IMPORT_FORMATS (shown by `import --help`); every problem names its line
 * or entry and what is accepted, and nothing is written unless the whole file is good.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { entityKeyFor, normaliseAddress, type EntityKeyOptions } from '../mail/addresses.ts';
import type { PromotionPolicy } from '../memory/promotion-policy.ts';
import type { Db } from '../store/database.ts';
import { resolveEntity } from '../store/entities.ts';
import { checkTrustedFactInput, setTrustedFact } from './profile-admin.ts';

interface ImportRow {
  /** "line 3" or "entry 0": where the row is in the file, for errors. */
  where: string;
  address: string;
  key: string;
  value: string;
  category?: string;
}

/** A CRM export is a few thousand rows; anything far larger is not one. */
const MAX_IMPORT_BYTES = 20 * 1024 * 1024;
const ADDRESS_COLUMNS = ['email', 'address', 'e-mail', 'mail'];
const JSON_SHAPES = '{"email", "<key>": value, ...}, {"email", "key", "value"[, "category"]} or {"email", "facts": {"<key>": value}}';

const scalar = z.union([z.string(), z.number(), z.boolean()], { error: 'expected a string, number or boolean' });
const email = z.string({ error: 'needs "email" (a string)' });
const longEntry = z.strictObject({
  email,
  key: z.string({ error: '"key" must be a string' }),
  value: scalar,
  category: z.string().optional(),
});
const nestedEntry = z.strictObject({ email, facts: z.record(z.string(), scalar), category: z.string().optional() });
const flatEntry = z.object({ email }).catchall(z.union([scalar, z.null()], { error: 'expected a string, number, boolean or null' }));

function jsonRows(fileName: string, content: string): ImportRow[] {
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch (error) {
    throw new AppError('INPUT_INVALID', `${fileName}: not JSON (${error instanceof Error ? error.message : 'parse error'})`);
  }
  if (!Array.isArray(json)) throw new AppError('INPUT_INVALID', `${fileName}: expected an array of ${JSON_SHAPES}`);
  return json.flatMap((entry: unknown, index): ImportRow[] => {
    const where = `entry ${index}`;
    const fail = (why: string): never => {
      throw new AppError('INPUT_INVALID', `${fileName}: ${where}: ${why}; accepted: ${JSON_SHAPES}`);
    };
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail('not an object');
    const schema = 'facts' in entry ? nestedEntry : 'key' in entry || 'value' in entry ? longEntry : flatEntry;
    const parsed = schema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const at = issue?.path.length ? `${issue.path.map(String).join('.')}: ` : '';
      return fail(`${at}${issue?.message ?? 'invalid'}`);
    }
    const row = parsed.data as Record<string, unknown> & { email: string; category?: string };
    const category = row.category === undefined ? {} : { category: row.category };
    if (schema === longEntry) return [{ where, address: row.email, key: String(row['key']), value: String(row['value']), ...category }];
    const facts = schema === nestedEntry ? (row['facts'] as Record<string, unknown>) : row;
    return Object.entries(facts).flatMap(([key, value]) =>
      (schema === flatEntry && (key === 'email' || key === 'category')) || value === null || value === ''
        ? []
        : [{ where, address: row.email, key, value: String(value as string | number | boolean), ...category }],
    );
  });
}

function csvRows(fileName: string, content: string): ImportRow[] {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    records = parse(content, {
      skip_empty_lines: true,
      trim: true,
      bom: true,
      relax_column_count: false,
      info: true,
    }) as unknown as typeof records;
  } catch (error) {
    throw new AppError('INPUT_INVALID', `${fileName}: not valid CSV (${error instanceof Error ? error.message : 'parse error'})`);
  }
  const [first, ...rows] = records;
  if (!first) throw new AppError('INPUT_INVALID', `${fileName}: empty file`);
  const header = first.record;
  const columns = header.map((h) => h.toLowerCase());
  const addressColumn = columns.findIndex((c) => ADDRESS_COLUMNS.includes(c));
  if (addressColumn < 0)
    throw new AppError(
      'INPUT_INVALID',
      `${fileName}: the header needs an email column (${ADDRESS_COLUMNS.join(', ')}), then key,value[,category] or one column per fact key`,
    );
  const isLong = columns.includes('key') && columns.includes('value');
  const categoryColumn = columns.indexOf('category');
  return rows.flatMap(({ record: row, info }): ImportRow[] => {
    const where = `line ${info.lines}`;
    const address = row[addressColumn] ?? '';
    if (isLong) {
      const category = categoryColumn >= 0 && row[categoryColumn] ? { category: row[categoryColumn] } : {};
      return [{ where, address, key: row[columns.indexOf('key')] ?? '', value: row[columns.indexOf('value')] ?? '', ...category }];
    }
    // Wide form: the header cell is the key as written ("Account Tier" is refused, not folded).
    return header.flatMap((key, c) =>
      c === addressColumn || !(row[c] ?? '').trim() ? [] : [{ where, address, key, value: row[c] ?? '' }],
    );
  });
}

/** Reads the whole file and checks every row; throws on the first problem, naming where it is. */
async function readImport(file: string): Promise<ImportRow[]> {
  const cannotRead = (error: NodeJS.ErrnoException): never => {
    throw new AppError('NOT_FOUND', `${file}: cannot read (${error.code ?? 'error'})`);
  };
  const size = (await stat(file).catch(cannotRead)).size;
  if (size > MAX_IMPORT_BYTES)
    throw new AppError('INPUT_INVALID', `${file}: ${size} bytes is over the ${MAX_IMPORT_BYTES}-byte limit for an import`);
  const content = await readFile(file, 'utf8').catch(cannotRead);
  return checkedRows(file, content);
}

/** The rows of a file's content (JSON when its name ends in .json, else CSV), every one checked. */
function checkedRows(file: string, content: string): ImportRow[] {
  const rows = path.extname(file).toLowerCase() === '.json' ? jsonRows(file, content) : csvRows(file, content);
  for (const row of rows) {
    if (!normaliseAddress(row.address))
      throw new AppError('INPUT_INVALID', `${file}: ${row.where}: "${row.address}" is not an email address`);
    try {
      checkTrustedFactInput(row);
    } catch (error) {
      if (error instanceof AppError) throw new AppError(error.code, `${file}: ${row.where}: ${error.message}`);
      throw error;
    }
  }
  return rows;
}

export async function importFacts(
  db: Db,
  policy: PromotionPolicy,
  entityKey: EntityKeyOptions,
  file: string,
): Promise<{ facts: number; customers: number }> {
  return storeRows(db, policy, entityKey, path.basename(file), await readImport(file));
}

/**
 * The same import from an uploaded file's content (the console's Import form): `fileName` says
 * CSV or JSON and names the file in errors and in the decision trail.
 */
export async function importFactsContent(
  db: Db,
  policy: PromotionPolicy,
  entityKey: EntityKeyOptions,
  fileName: string,
  content: string,
): Promise<{ facts: number; customers: number }> {
  if (Buffer.byteLength(content) > MAX_IMPORT_BYTES)
    throw new AppError('INPUT_INVALID', `${fileName}: over the ${MAX_IMPORT_BYTES}-byte limit for an import`);
  return storeRows(db, policy, entityKey, fileName, checkedRows(fileName, content));
}

async function storeRows(
  db: Db,
  policy: PromotionPolicy,
  entityKey: EntityKeyOptions,
  fileName: string,
  rows: ImportRow[],
): Promise<{ facts: number; customers: number }> {
  const customers = new Set<string>();
  for (const row of rows) {
    const address = normaliseAddress(row.address)!;
    const entity = await resolveEntity(db, address, entityKeyFor(address, entityKey), null);
    customers.add(entity.id);
    await setTrustedFact(db, policy, entity.id, {
      key: row.key,
      value: row.value,
      ...(row.category ? { category: row.category } : {}),
      origin: 'import',
      actor: `import ${fileName}`,
    });
  }
  return { facts: rows.length, customers: customers.size };
}
