/**
 * A mailbox's history for `support-agent eval`: an mbox file (split by node-mbox), a Maildir
 * (`cur/` and `new/`, one message per file), or a folder of .eml files. Every message is read
 * under the same size cap as ingestion; the whole history under `MAX_HISTORY_BYTES`.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { MboxStream } from 'node-mbox';
import { AppError } from '../errors.ts';

export interface HistoryMessage {
  /** Where it came from: `file.mbox#12`, a Maildir or .eml file name. */
  name: string;
  raw: Buffer;
}

/** A history larger than this is refused: the evaluation holds it in memory. */
export const MAX_HISTORY_BYTES = 1024 * 1024 * 1024;

export async function readHistory(input: string, maxMessageBytes: number): Promise<HistoryMessage[]> {
  const info = await stat(input).catch((error: NodeJS.ErrnoException) => {
    throw new AppError('NOT_FOUND', `${input}: ${error.code === 'ENOENT' ? 'no such file or folder' : (error.code ?? 'cannot read')}`);
  });
  if (info.isFile()) {
    if (info.size > MAX_HISTORY_BYTES) throw new AppError('INPUT_INVALID', `${input}: larger than ${MAX_HISTORY_BYTES} bytes`);
    return input.toLowerCase().endsWith('.eml')
      ? [{ name: path.basename(input), raw: await readFile(input) }]
      : readMbox(input, maxMessageBytes);
  }
  const isMaildir = (
    await Promise.all(
      ['cur', 'new'].map((d) =>
        stat(path.join(input, d)).then(
          (s) => s.isDirectory(),
          () => false,
        ),
      ),
    )
  ).some(Boolean);
  const entries = await readdir(input, { withFileTypes: true, recursive: true });
  const files = entries
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .filter((file) => (isMaildir ? /[\\/](cur|new)[\\/][^\\/]+$/.test(file) : file.toLowerCase().endsWith('.eml')))
    .sort();
  let total = 0;
  const messages: HistoryMessage[] = [];
  for (const file of files) {
    const size = (await stat(file)).size;
    total += size;
    if (total > MAX_HISTORY_BYTES) throw new AppError('INPUT_INVALID', `${input}: larger than ${MAX_HISTORY_BYTES} bytes`);
    if (size > maxMessageBytes) continue;
    messages.push({ name: path.relative(input, file), raw: await readFile(file) });
  }
  return messages;
}

/** mboxrd quoting: a body line `>From ` (any number of `>`) was written with one `>` more. */
function unquoteFromLines(raw: Buffer): Buffer {
  const text = raw.toString('latin1');
  return text.includes('>From ') ? Buffer.from(text.replace(/^>(>*From )/gm, '$1'), 'latin1') : raw;
}

function readMbox(file: string, maxMessageBytes: number): Promise<HistoryMessage[]> {
  return new Promise((resolve, reject) => {
    const messages: HistoryMessage[] = [];
    let index = 0;
    const stream = MboxStream(createReadStream(file));
    stream.on('data', (message: Buffer) => {
      index++;
      if (message.length <= maxMessageBytes) messages.push({ name: `${path.basename(file)}#${index}`, raw: unquoteFromLines(message) });
    });
    stream.on('error', (error: Error) =>
      reject(new AppError('INPUT_INVALID', `${file}: ${error.message === 'NOT_AN_MBOX_FILE' ? 'not an mbox file' : error.message}`)),
    );
    stream.on('end', () => resolve(messages));
  });
}
