/**
 * The one ZIP reader of attachments: Office documents (docx, xlsx, odt, ods) are ZIP archives, and
 * the entries measured here are the entries read, byte for byte: this function inflates them (and
 * counts what it inflates), and the Office reader (attachment-office.ts) parses only what it
 * returns. Nothing else ever opens the archive, so a file whose central directory and local headers
 * disagree cannot pass one reader's limits and then blow up another's (it did: mammoth read the
 * central directory of a .docx whose local headers had passed, and took the process to 1.9 GB).
 *
 * The archive is read front to back by its local headers (fflate's streaming `Unzip`); the central
 * directory is never consulted. Compressed bytes go in `stepBytes` at a time (one step inflates to at
 * most about 1,032 times its size), and every inflated chunk is counted before it is kept: past
 * `maxInflatedBytes` (all entries together, kept or not) or `maxEntries`, reading stops with a
 * `ZipLimitError`. Only the entries `wanted` names are kept. Pure: no I/O.
 */
import { Unzip, UnzipInflate } from 'fflate';

export interface ZipLimits {
  /** Inflated bytes of all entries together. */
  maxInflatedBytes: number;
  /** Entries (local headers) in the archive. */
  maxEntries: number;
  /** Compressed bytes handed to the inflater at a time. */
  stepBytes: number;
}

/** An archive whose entries inflate to more than this, all together, is not read. */
export const MAX_INFLATED_BYTES = 64 * 1024 * 1024;

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxInflatedBytes: MAX_INFLATED_BYTES, maxEntries: 5_000, stepBytes: 4 * 1024 };

/** A limit was reached; `message` is the reason shown ("it inflates to more than 64 MB …"). */
export class ZipLimitError extends Error {}

export interface ZipRead {
  /** The wanted entries, inflated. A name seen twice keeps its last entry (both were counted). */
  entries: Map<string, Uint8Array>;
  /** Local headers seen. */
  entryCount: number;
  /** Bytes inflated, all entries together. */
  inflatedBytes: number;
}

/** Reads the archive under `limits`. Throws `ZipLimitError` at a limit, `Error` on a corrupt archive. */
export function unzipBounded(bytes: Uint8Array, wanted: (name: string) => boolean, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipRead {
  const kept = new Map<string, Uint8Array[]>();
  let entryCount = 0;
  let inflatedBytes = 0;
  let failure: Error | null = null;
  const unzip = new Unzip((file) => {
    entryCount++;
    if (entryCount > limits.maxEntries)
      throw new ZipLimitError(`it has more than ${limits.maxEntries.toLocaleString('en-US')} entries in the archive`);
    // Only stored (0) and deflated (8) entries are read; fflate has no inflater for the others.
    if (file.compression !== 0 && file.compression !== 8)
      throw new Error(`an entry uses compression method ${file.compression}, which is not read`);
    const chunks: Uint8Array[] | null = wanted(file.name) ? [] : null;
    if (chunks) kept.set(file.name, chunks);
    file.ondata = (error, data) => {
      if (error) {
        failure ??= error instanceof Error ? error : new Error(String(error));
        return;
      }
      inflatedBytes += data.length;
      if (inflatedBytes > limits.maxInflatedBytes) throw new ZipLimitError(inflatedMessage(limits));
      chunks?.push(data);
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  for (let at = 0; at < bytes.length; at += limits.stepBytes) {
    unzip.push(bytes.subarray(at, at + limits.stepBytes), at + limits.stepBytes >= bytes.length);
    if (failure) throw failure;
  }
  const entries = new Map<string, Uint8Array>();
  for (const [name, chunks] of kept) entries.set(name, Buffer.concat(chunks));
  return { entries, entryCount, inflatedBytes };
}

function inflatedMessage(limits: ZipLimits): string {
  const mb = limits.maxInflatedBytes / (1024 * 1024);
  return `it inflates to more than ${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB (a zip bomb?)`;
}
