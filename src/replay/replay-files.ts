/**
 * Finds the .eml files a replay names and orders them by their Date header, reading only each
 * file's header section.
 */
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../errors.ts';

export interface ReplayFile {
  path: string;
  /** Date header, or null when missing or unparseable (such files replay last, by name). */
  date: Date | null;
}

const HEADER_PEEK_BYTES = 256 * 1024;

/** Expands files and folders (recursively, `.eml` only inside folders) into a sorted list. */
export async function collectReplayFiles(inputs: readonly string[]): Promise<ReplayFile[]> {
  const files: string[] = [];
  for (const input of inputs) {
    const info = await stat(input).catch((error: NodeJS.ErrnoException) => {
      throw new AppError('NOT_FOUND', `${input}: ${error.code === 'ENOENT' ? 'no such file or folder' : (error.code ?? 'cannot read')}`);
    });
    if (info.isDirectory()) {
      const entries = await readdir(input, { withFileTypes: true, recursive: true }).catch((error: NodeJS.ErrnoException) => {
        throw new AppError('INPUT_INVALID', `${input}: cannot list folder (${error.code ?? 'error'})`);
      });
      files.push(...entries.filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.eml')).map((e) => path.join(e.parentPath, e.name)));
    } else if (info.isFile()) {
      files.push(input);
    } else {
      throw new AppError('INPUT_INVALID', `${input}: not a file or folder`);
    }
  }
  const unique = [...new Set(files.map((f) => path.resolve(f)))];
  const dated = await Promise.all(unique.map(async (file) => ({ path: file, date: await readDateHeader(file) })));
  return dated.sort(compareReplayOrder);
}

function compareReplayOrder(a: ReplayFile, b: ReplayFile): number {
  const at = a.date?.getTime() ?? Number.POSITIVE_INFINITY;
  const bt = b.date?.getTime() ?? Number.POSITIVE_INFINITY;
  if (at !== bt) return at < bt ? -1 : 1;
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

async function readDateHeader(file: string): Promise<Date | null> {
  const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new AppError('INPUT_INVALID', `${file}: cannot open (${error.code ?? 'error'})`);
  });
  try {
    const buffer = Buffer.alloc(HEADER_PEEK_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEADER_PEEK_BYTES, 0);
    const text = buffer.subarray(0, bytesRead).toString('latin1');
    const end = text.search(/\r?\n\r?\n/);
    const headers = (end >= 0 ? text.slice(0, end) : text).replace(/\r?\n[ \t]+/g, ' ');
    const match = /^date:[ \t]*(.+)$/im.exec(headers);
    if (!match?.[1]) return null;
    const date = new Date(match[1].trim());
    return Number.isFinite(date.getTime()) ? date : null;
  } finally {
    await handle.close();
  }
}
