/**
 * Lenient reading of the header section, where mail clients are lenient: a byte-order mark, blank
 * or whitespace-only lines before the first header (seen in bounce-parser corpora and in mail saved
 * by some clients and webmail exports), an mbox `From ` separator line, indentation before the first
 * header field, and bare CR line ends (classic Mac OS, some Windows tools; Thunderbird, Apple Mail
 * and Python's email package all read a lone CR as a line break). Each repair is recorded, so what
 * the parser was given differs from the stored raw bytes only in ways an operator can read. Pure,
 * linear in the size of the message, and it never looks past a bounded prefix for the leading junk.
 */

/** What `repairHeaderSection` did: the bytes to parse and one line per repair (empty when none). */
export interface HeaderRepair {
  raw: Buffer;
  repairs: string[];
}

/** Leading junk beyond this is not "a client's quirk" any more: leave it, and the mail stays malformed. */
const MAX_LEADING_BYTES = 8 * 1024;
const MAX_LEADING_LINES = 100;

const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;

/** A header field name followed by a colon ("Name: value"; RFC 822 allowed blanks before the colon). */
const HEADER_FIELD = /^[\x21-\x39\x3b-\x7e]{1,200}[ \t]*:/;

/** Repairs what clients forgive; returns the input buffer itself when nothing needed repair. */
export function repairHeaderSection(input: Buffer): HeaderRepair {
  const repairs: string[] = [];
  let start = 0;
  if (input.length >= 3 && input[0] === 0xef && input[1] === 0xbb && input[2] === 0xbf) {
    start = 3;
    repairs.push('byte-order mark before the headers removed');
  }

  let blankLines = 0;
  let mboxLine = false;
  for (let lines = 0; lines < MAX_LEADING_LINES && start < input.length && start < MAX_LEADING_BYTES; lines++) {
    const end = lineEnd(input, start);
    if (isBlank(input, start, end.contentEnd)) {
      blankLines++;
      start = end.next;
      continue;
    }
    // The mbox separator ("From sender@host Tue Nov  3 10:00:00 2026"): no colon right after "From".
    if (!mboxLine && input.toString('latin1', start, Math.min(start + 5, input.length)) === 'From ') {
      mboxLine = true;
      start = end.next;
      continue;
    }
    break;
  }
  if (start > 0 && start >= input.length) return { raw: input, repairs: [] };
  if (blankLines > 0) repairs.push(`${blankLines} blank or whitespace-only line${blankLines === 1 ? '' : 's'} before the headers removed`);
  if (mboxLine) repairs.push('mbox "From " separator line removed');

  let body = start > 0 ? input.subarray(start) : input;
  const indent = leadingBlanks(body);
  if (indent > 0 && HEADER_FIELD.test(body.toString('latin1', indent, Math.min(indent + 220, body.length)))) {
    body = body.subarray(indent);
    repairs.push('whitespace before the first header field removed');
  }

  const bareCr = countBareCr(body);
  if (bareCr > 0) {
    body = bareCrToCrlf(body, bareCr);
    repairs.push(`${bareCr} bare CR line end${bareCr === 1 ? '' : 's'} read as line breaks`);
  }
  return { raw: repairs.length > 0 ? body : input, repairs };
}

/** The first line must be a header field ("Name: value"), or the bytes are not a message at all. */
export function startsWithHeaderField(raw: Buffer): boolean {
  return HEADER_FIELD.test(raw.toString('latin1', 0, Math.min(raw.length, 2000)));
}

function lineEnd(buffer: Buffer, from: number): { contentEnd: number; next: number } {
  for (let i = from; i < buffer.length && i < from + MAX_LEADING_BYTES; i++) {
    const byte = buffer[i];
    if (byte === LF) return { contentEnd: i, next: i + 1 };
    if (byte === CR) return { contentEnd: i, next: buffer[i + 1] === LF ? i + 2 : i + 1 };
  }
  return { contentEnd: Math.min(buffer.length, from + MAX_LEADING_BYTES), next: Math.min(buffer.length, from + MAX_LEADING_BYTES) };
}

function isBlank(buffer: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buffer[i] !== SPACE && buffer[i] !== TAB) return false;
  return true;
}

function leadingBlanks(buffer: Buffer): number {
  let i = 0;
  while (i < buffer.length && i < 200 && (buffer[i] === SPACE || buffer[i] === TAB)) i++;
  return i;
}

function countBareCr(buffer: Buffer): number {
  let count = 0;
  for (let i = buffer.indexOf(CR); i !== -1; i = buffer.indexOf(CR, i + 1)) {
    if (buffer[i + 1] !== LF) count++;
  }
  return count;
}

function bareCrToCrlf(buffer: Buffer, bareCr: number): Buffer {
  const out = Buffer.allocUnsafe(buffer.length + bareCr);
  let written = 0;
  let copied = 0;
  for (let i = buffer.indexOf(CR); i !== -1; i = buffer.indexOf(CR, i + 1)) {
    if (buffer[i + 1] === LF) continue;
    written += buffer.copy(out, written, copied, i + 1);
    out[written++] = LF;
    copied = i + 1;
  }
  written += buffer.copy(out, written, copied);
  return out.subarray(0, written);
}
