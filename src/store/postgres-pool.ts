import pg from 'pg';

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

type QueryResultLike = { fields?: Array<{ dataTypeID: number }> } | Array<{ fields?: Array<{ dataTypeID: number }> }>;

function charColumnsAsText(result: unknown): void {
  const results = (Array.isArray(result) ? result : [result]) as Exclude<QueryResultLike, unknown[]>[];
  for (const r of results) for (const field of r?.fields ?? []) if (field.dataTypeID === PG_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
}

/**
 * A pg pool for the schema engine. Its introspection reads catalog columns of PostgreSQL's one-byte
 * `"char"` type, which @prisma/adapter-pg 7.10 refuses ("Column type 'char' could not be
 * deserialized"); the value arrives as a one-character string, so it is labelled text instead.
 */
export class SchemaEnginePool extends pg.Pool {
  override query(...args: unknown[]): never {
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    if (result instanceof Promise) {
      return result.then((r) => {
        charColumnsAsText(r);
        return r;
      }) as never;
    }
    return result as never;
  }
}
