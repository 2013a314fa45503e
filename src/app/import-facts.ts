/**
 * `support-agent import`: trusted facts from a CRM export, keyed by email address. CSV in long
 * form (email,key,value[,category]) or wide form (email,account_tier,plan,...), or JSON
 * ([{ "email": "...", "facts": { "account_tier": "premium" } }] or [{ email, key, value }]).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { entityKeyFor, normaliseAddress, type EntityKeyOptions } from '../mail/addresses.ts';
import type { PromotionPolicy } from '../memory/promotion-policy.ts';
import type { Db } from '../store/database.ts';
import { resolveEntity } from '../store/entities.ts';
import { setTrustedFact } from './profile-admin.ts';

export interface ImportRow {
  address: string;
  key: string;
  value: string;
  category?: string;
}

const ADDRESS_COLUMNS = ['email', 'address', 'e-mail', 'mail'];
const longRow = z.object({
  email: z.string(),
  key: z.string(),
  value: z.union([z.string(), z.number(), z.boolean()]),
  category: z.string().optional(),
});
const wideRow = z.object({ email: z.string(), facts: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])) });
const jsonFile = z.array(z.union([longRow, wideRow]));

/** Parses the file into rows; every problem names its line or index. */
function parseImport(fileName: string, content: string): ImportRow[] {
  if (path.extname(fileName).toLowerCase() === '.json') {
    let json: unknown;
    try {
      json = JSON.parse(content);
    } catch (error) {
      throw new AppError('INPUT_INVALID', `${fileName}: not JSON (${error instanceof Error ? error.message : 'parse error'})`);
    }
    const parsed = jsonFile.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new AppError('INPUT_INVALID', `${fileName}: entry ${String(issue?.path[0] ?? '?')}: ${issue?.message ?? 'invalid'}`);
    }
    return parsed.data.flatMap((row) =>
      'facts' in row
        ? Object.entries(row.facts).map(([key, value]) => ({ address: row.email, key, value: String(value) }))
        : [{ address: row.email, key: row.key, value: String(row.value), ...(row.category ? { category: row.category } : {}) }],
    );
  }
  let records: string[][];
  try {
    records = parse(content, { skip_empty_lines: true, trim: true, bom: true, relax_column_count: false }) as string[][];
  } catch (error) {
    throw new AppError('INPUT_INVALID', `${fileName}: not valid CSV (${error instanceof Error ? error.message : 'parse error'})`);
  }
  const [header, ...rows] = records;
  if (!header) throw new AppError('INPUT_INVALID', `${fileName}: empty file`);
  const columns = header.map((h) => h.toLowerCase());
  const addressColumn = columns.findIndex((c) => ADDRESS_COLUMNS.includes(c));
  if (addressColumn < 0)
    throw new AppError('INPUT_INVALID', `${fileName}: the header needs an email column (${ADDRESS_COLUMNS.join(', ')})`);
  const isLong = columns.includes('key') && columns.includes('value');
  return rows.flatMap((row): ImportRow[] => {
    const address = row[addressColumn] ?? '';
    if (isLong) {
      const category = row[columns.indexOf('category')];
      return [
        { address, key: row[columns.indexOf('key')] ?? '', value: row[columns.indexOf('value')] ?? '', ...(category ? { category } : {}) },
      ];
    }
    return columns.flatMap((column, c) =>
      c === addressColumn || !(row[c] ?? '').trim() ? [] : [{ address, key: column, value: row[c] ?? '' }],
    );
  });
}

export async function importFacts(
  db: Db,
  policy: PromotionPolicy,
  entityKey: EntityKeyOptions,
  file: string,
): Promise<{ facts: number; customers: number }> {
  const content = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new AppError('NOT_FOUND', `${file}: cannot read (${error.code ?? 'error'})`);
  });
  const rows = parseImport(file, content);
  const bad = rows.find((r) => !normaliseAddress(r.address));
  if (bad) throw new AppError('INPUT_INVALID', `${file}: "${bad.address}" is not an email address`);
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
      actor: `import ${path.basename(file)}`,
    });
  }
  return { facts: rows.length, customers: customers.size };
}
