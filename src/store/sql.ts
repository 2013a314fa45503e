/**
 * Plain SQL on the same database as Prisma, for the one hot path where Prisma's per-statement cost
 * dominates: ingestion (see docs/performance.md "Performance"). PostgreSQL goes through the pool Prisma's
 * adapter also uses; PGlite through its own query API, whose transactions share PGlite's lock with
 * the Prisma adapter's. Everything else stays on Prisma.
 */
import { createHash } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';

export interface SqlExecutor {
  /** Rows as the driver returns them: json/jsonb columns parsed, text as strings. */
  query(text: string, params?: readonly unknown[]): Promise<Array<Record<string, unknown>>>;
}

/**
 * Statements are named by their text, so each connection parses and plans a statement once and
 * reuses the plan; the few statement shapes ingestion uses keep that cache small.
 */
export function postgresSql(pool: pg.Pool): SqlExecutor {
  const names = new Map<string, string>();
  const nameOf = (text: string): string => {
    let name = names.get(text);
    if (!name) {
      name = `sa_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      names.set(text, name);
    }
    return name;
  };
  return {
    async query(text, params = []) {
      const result = await pool.query({ name: nameOf(text), text, values: [...params] });
      return result.rows as Array<Record<string, unknown>>;
    },
  };
}

/** PostgreSQL's type OID of `bytea`. */
const BYTEA_OID = 17;

// PGlite's own bytea serializer builds one string per byte (Array.from(bytes).map(...).join('')):
// about 100 bytes of heap per byte stored, so a 40 MB message's raw bytes peaked at 4 GB of RSS.
// Node's hex encoder makes the same `\x…` text in one pass.
const PGLITE_QUERY_OPTIONS = {
  serializers: {
    [BYTEA_OID]: (value: unknown): string => {
      if (!(value instanceof Uint8Array)) throw new TypeError('a bytea parameter must be bytes');
      return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
    },
  },
};

export function pgliteSql(db: PGlite): SqlExecutor {
  return {
    async query(text, params = []) {
      const result = await db.query<Record<string, unknown>>(text, [...params], PGLITE_QUERY_OPTIONS);
      return result.rows;
    },
  };
}

/** The server's error details, from either driver (both use pg-protocol's DatabaseError). */
export interface SqlErrorInfo {
  /** SQLSTATE, e.g. 23505 unique_violation, 23503 foreign_key_violation. */
  code: string;
  constraint: string | undefined;
}

export function sqlErrorInfo(error: unknown): SqlErrorInfo | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return null;
  return { code, constraint: typeof constraint === 'string' ? constraint : undefined };
}

/** A timestamp parameter for Prisma's `timestamp(3)` columns, which hold UTC without a zone. */
export function utcTimestamp(date: Date): string {
  return date.toISOString();
}
