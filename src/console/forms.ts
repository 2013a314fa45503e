/**
 * The edge of every console request: route params, query strings and form bodies are parsed
 * with zod here, so handlers only ever see typed values. A bad input is an INPUT_INVALID error
 * naming the field (never echoing its value).
 */
import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { ConsoleContext } from './context.ts';

/** Our ids (`d_…`, `t_…`, `e_…`) and nothing that could be a path or markup. */
const idSchema = z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'is not an id');

function invalid(error: z.ZodError, what: string): AppError {
  const fields = error.issues.map((i) => `${i.path.join('.') || what}: ${i.message}`).join('; ');
  return new AppError('INPUT_INVALID', `invalid ${what} (${fields})`);
}

export function readParam(c: ConsoleContext, name: string): string {
  const parsed = idSchema.safeParse(c.req.param(name));
  if (!parsed.success) throw invalid(parsed.error, name);
  return parsed.data;
}

export function readQuery<T>(c: ConsoleContext, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw invalid(parsed.error, 'query');
  return parsed.data;
}

/** The form body (already read once by the CSRF check; Hono caches it). */
export async function readForm<T>(c: ConsoleContext, schema: z.ZodType<T>): Promise<T> {
  const parsed = schema.safeParse(await c.req.parseBody());
  if (!parsed.success) throw invalid(parsed.error, 'form');
  return parsed.data;
}

/** Form text: CRLF from browsers becomes LF, as everywhere else in the product. */
export const formText = (max: number) =>
  z
    .string()
    .max(max)
    .transform((s) => s.replace(/\r\n?/g, '\n'));
