/**
 * Files uploaded through the console's forms (multipart/form-data): the knowledge import and the
 * facts import. The request body is capped before it is parsed (`uploadBodyLimit`, larger than the
 * other forms' and only on these paths); the CSRF check has read the same parsed body, so an
 * upload carries the session's token like every other form.
 */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import type { ConsoleContext, ConsoleEnv } from './context.ts';
import { formatBytes } from '../mail/attachments.ts';

/** Paths whose forms carry a file. */
export const UPLOAD_PATHS = new Set(['/knowledge/import', '/customers/import']);

/** Room for the multipart framing and the form's other fields around the file. */
const FRAMING_BYTES = 64 * 1024;

/** The body cap of the upload paths: the file's cap and its framing. */
export function uploadBodyLimit(maxFileBytes: number): MiddlewareHandler<ConsoleEnv> {
  return bodyLimit({
    maxSize: maxFileBytes + FRAMING_BYTES,
    onError: (c) => c.text(`The file is too large: at most ${formatBytes(maxFileBytes)}.`, 413),
  });
}

export interface Upload {
  /** The file's name as the browser gave it, without any folder part. */
  name: string;
  bytes: Uint8Array;
}

const fileField = z.instanceof(File, { error: 'choose a file' });

/** The uploaded file of the form's `field`; refused when missing, empty or over `maxBytes`. */
export async function readUpload(c: ConsoleContext, field: string, maxBytes: number): Promise<Upload> {
  const body = await c.req.parseBody();
  const parsed = fileField.safeParse(body[field]);
  if (!parsed.success) throw new AppError('INPUT_INVALID', `invalid form (${field}: choose a file)`);
  const file = parsed.data;
  if (file.size === 0) throw new AppError('INPUT_INVALID', `invalid form (${field}: the file is empty)`);
  if (file.size > maxBytes) throw new AppError('INPUT_INVALID', `invalid form (${field}: larger than ${formatBytes(maxBytes)})`);
  const name =
    file.name
      .split(/[\\/]/)
      .pop()
      ?.replace(/[\u0000-\u001f\u007f]/g, '')
      .slice(0, 200) ?? '';
  return { name: name || 'upload', bytes: new Uint8Array(await file.arrayBuffer()) };
}
