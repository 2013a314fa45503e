/**
 * Run as a child process by test/integration/attachment-bombs.test.ts (and bench/phases/attachments.ts):
 * reads each attachment file named on the command line the way ingestion does (the mail parsed by
 * the parse pool, its attachments by the warm reader pool, `readAttachments`) and prints one JSON
 * line per file with what became of it and the process's peak RSS while it was read: the kernel's
 * high-water mark (VmHWM, which counts every thread's memory, the workers' included), reset before
 * each file by writing 5 to /proc/self/clear_refs.
 *
 * Usage: node --import tsx test/support/read-bombs.ts <contentType> <file> [<contentType> <file> ...]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { attachmentFileLimits, DEFAULT_ATTACHMENT_SETTINGS, readAttachments } from '../../src/ingest/attachment-text.ts';
import { DEFAULT_PARSE_SETTINGS, sharedParsePool } from '../../src/ingest/parse-pool.ts';
import { silentLogger } from '../../src/logger.ts';
import { buildPdf, mailWithAttachments } from './attachment-files.ts';

export interface BombReading {
  file: string;
  status: string;
  kind: string;
  reason: string;
  /** Peak RSS of the whole process while this file was read, in MB. */
  peakMb: number;
  /** RSS just before, in MB. */
  beforeMb: number;
}

function status(field: 'VmHWM' | 'VmRSS'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

async function readOne(filename: string, contentType: string, content: Buffer): Promise<{ status: string; kind: string; reason: string }> {
  const raw = Buffer.from(mailWithAttachments({ body: 'see attached', parts: [{ filename, contentType, content }] }));
  const read = await sharedParsePool(DEFAULT_PARSE_SETTINGS, silentLogger).read(raw, attachmentFileLimits(DEFAULT_ATTACHMENT_SETTINGS));
  if (!read.parsed.ok) return { status: 'unparsed', kind: '', reason: read.parsed.reason };
  const { attachments } = await readAttachments(read.parsed.email, DEFAULT_ATTACHMENT_SETTINGS);
  const e = attachments[0]?.extraction;
  return { status: e?.status ?? '?', kind: e?.kind ?? '', reason: e?.reason ?? '' };
}

const args = process.argv.slice(2);
// Warm up: both pools started, PDF.js loaded in a reader, so the figures are the files' own.
for (let i = 0; i < DEFAULT_ATTACHMENT_SETTINGS.workers; i++) await readOne('warm.pdf', 'application/pdf', buildPdf([['warm up']]));
for (let i = 0; i + 1 < args.length; i += 2) {
  const [contentType, path] = [args[i]!, args[i + 1]!];
  const content = readFileSync(path);
  global.gc?.();
  const beforeMb = status('VmRSS');
  writeFileSync('/proc/self/clear_refs', '5');
  const outcome = await readOne(basename(path), contentType, content);
  const reading: BombReading = { file: basename(path), ...outcome, peakMb: Math.round(status('VmHWM')), beforeMb: Math.round(beforeMb) };
  process.stdout.write(`${JSON.stringify(reading)}\n`);
}
