/**
 * Erasure in raw mail bytes (`MessageRaw.raw`) of messages that stay because they belong to
 * someone else but mention the erased customer. A byte search cannot see a name inside a base64
 * body part or an RFC 2047 encoded-word, so the message is taken apart and put back together:
 *
 * 1. the whole message as bytes (a latin1 round trip, lossless for any byte): addresses and names
 *    in plain headers, 7bit/8bit bodies in UTF-8 or ISO-8859-1, percent and HTML-entity forms;
 * 2. structure, with mailsplit (the splitter/joiner behind imapflow, which rebuilds a message byte
 *    for byte where nothing changed): every header with encoded-words is decoded, redacted and
 *    re-encoded; every base64 or quoted-printable part is decoded, redacted and re-encoded in the
 *    same transfer encoding; an attached message (message/rfc822) is redacted recursively (three
 *    levels); a binary part (PDF, image…) whose decoded bytes still name the customer is emptied;
 * 3. a check with the product's own parser (mailparser): if the subject, any address or display
 *    name, the text or the HTML still mentions the customer (a charset the byte search does not
 *    cover, such as UTF-16 or ISO-2022-JP; a message too broken to split), the original is
 *    replaced by a re-rendering of the stored, already redacted columns (`renderErasedOriginal`),
 *    marked with an `X-Support-Agent-Erasure` header. What cannot be found at all (a name inside
 *    a compressed PDF stream or a zip) is not found; see the README.
 *
 * Pure: bytes in, bytes out; bounded by `MAX_REWRITE_BYTES`.
 */
import { PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Joiner, Splitter, type MimeNode } from '@zone-eu/mailsplit';
import libmime from 'libmime';
import * as libqp from 'libqp';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { base64Forms, REDACTED_NAME, Redactor, type ErasureNeedles } from './erasure-patterns.ts';
import { parseRawEmail, type MailAddress } from './parse-message.ts';

/** Larger originals are not taken apart; they are replaced by the re-rendering. */
export const MAX_REWRITE_BYTES = 32 * 1024 * 1024;
const MAX_DEPTH = 3;
export const ERASURE_HEADER = 'X-Support-Agent-Erasure';

export interface RawRewrite {
  raw: Buffer;
  changed: boolean;
  /** An address, full name or handle was found (so the weak needles apply to this message). */
  strong: boolean;
  /** Binary parts emptied because their decoded bytes named the customer. */
  partsEmptied: number;
}

/** The stored columns a replacement original is rendered from (already redacted). */
export interface ErasedOriginalSource {
  messageId: string;
  fromAddress: string | null;
  fromName: string | null;
  to: string[];
  cc: string[];
  subject: string;
  date: Date | null;
  inReplyTo: string | null;
  references: string[];
  bodyText: string;
}

export type RawOutcome =
  { kind: 'unchanged' } | { kind: 'redacted'; raw: Buffer; partsEmptied: number } | { kind: 'replaced'; raw: Buffer; reason: string };

/**
 * The whole procedure for one stored original. `mentioned` says the database already found the
 * customer in this message's decoded columns, so the weak needles apply even when the raw bytes
 * hide every strong one inside encodings.
 */
export async function eraseFromOriginal(
  raw: Buffer,
  needles: ErasureNeedles,
  mentioned: boolean,
  source: ErasedOriginalSource,
): Promise<RawOutcome> {
  const text = new Redactor(needles, 'text');
  if (raw.length > MAX_REWRITE_BYTES) return replaced(source, 'too large to rewrite');
  let rewrite: RawRewrite;
  try {
    const first = await rewriteRaw(raw, needles, false, 0);
    rewrite = first;
    if (first.strong || mentioned) {
      const second = await rewriteRaw(first.raw, needles, true, 0);
      rewrite = { ...second, changed: first.changed || second.changed, partsEmptied: first.partsEmptied + second.partsEmptied };
    }
  } catch {
    return replaced(source, 'could not be taken apart');
  }
  const residue = await residualMention(rewrite.raw, text, base64Forms(needles));
  if (residue) return replaced(source, residue);
  return rewrite.changed ? { kind: 'redacted', raw: rewrite.raw, partsEmptied: rewrite.partsEmptied } : { kind: 'unchanged' };
}

async function replaced(source: ErasedOriginalSource, reason: string): Promise<RawOutcome> {
  return { kind: 'replaced', raw: await renderErasedOriginal(source, reason), reason };
}

/** Steps 1 and 2: byte-level, then structural. `weak` applies the weak needles everywhere. */
async function rewriteRaw(raw: Buffer, needles: ErasureNeedles, weak: boolean, depth: number): Promise<RawRewrite> {
  const bytes = new Redactor(needles, 'bytes');
  const text = new Redactor(needles, 'text');
  const mode = weak ? 'always' : 'never';
  const flat = bytes.redact(raw.toString('latin1'), { weak: mode });
  const state = { strong: flat.strong, changed: flat.changed, partsEmptied: 0 };
  const input = flat.changed ? Buffer.from(flat.value, 'latin1') : raw;
  const output: Buffer[] = [];
  const redactNodes = new Transform({
    readableObjectMode: true,
    writableObjectMode: true,
    transform(chunk: SplitterChunk, _encoding: BufferEncoding, callback: TransformCallback) {
      handleChunk(chunk).then(
        () => callback(),
        (error: unknown) => callback(error as Error),
      );
    },
    flush(callback: TransformCallback) {
      finishLeaf().then(
        () => callback(),
        (error: unknown) => callback(error as Error),
      );
    },
  });
  let leaf: { node: MimeNode; chunks: ContentChunk[] } | null = null;

  async function handleChunk(chunk: SplitterChunk): Promise<void> {
    if (chunk.type === 'body' && leaf) {
      leaf.chunks.push(chunk);
      return;
    }
    await finishLeaf();
    if (chunk.type === 'node') {
      redactHeaders(chunk, text, mode, state);
      if (!chunk.multipart && needsDecoding(chunk)) {
        leaf = { node: chunk, chunks: [] };
        return;
      }
    }
    redactNodes.push(chunk);
  }

  async function finishLeaf(): Promise<void> {
    if (!leaf) return;
    const { node, chunks } = leaf;
    leaf = null;
    const encoded = Buffer.concat(chunks.map((c) => c.value));
    const decoded = decodeBody(node.encoding, encoded);
    const replacement = await redactBody(node, decoded);
    redactNodes.push(node);
    if (replacement === null) {
      for (const c of chunks) redactNodes.push(c);
      return;
    }
    state.changed = true;
    redactNodes.push({ type: 'body', node, value: encodeBody(node.encoding, replacement) });
  }

  async function redactBody(node: MimeNode, decoded: Buffer): Promise<Buffer | null> {
    if (node.contentType === 'message/rfc822' && depth < MAX_DEPTH) {
      const inner = await rewriteRaw(decoded, needles, weak, depth + 1);
      state.strong ||= inner.strong;
      state.partsEmptied += inner.partsEmptied;
      return inner.changed ? inner.raw : null;
    }
    const result = bytes.redact(decoded.toString('latin1'), { weak: mode });
    state.strong ||= result.strong;
    if (!result.changed) return null;
    if (isTextual(node)) return Buffer.from(result.value, 'latin1');
    // A binary part cannot be edited in place without corrupting it (offsets, checksums).
    state.partsEmptied++;
    return Buffer.alloc(0);
  }

  await pipeline(
    Readable.from([input]),
    new Splitter({ defaultInlineEmbedded: true, maxChildNodes: 2000 }),
    redactNodes,
    new Joiner(),
    new PassThrough().on('data', (data: Buffer) => output.push(data)),
  );
  const rebuilt = Buffer.concat(output);
  return { raw: state.changed ? rebuilt : raw, changed: state.changed, strong: state.strong, partsEmptied: state.partsEmptied };
}

interface ContentChunk {
  type: 'body' | 'data';
  node: MimeNode;
  value: Buffer;
}
type SplitterChunk = MimeNode | ContentChunk;

function needsDecoding(node: MimeNode): boolean {
  return node.encoding === 'base64' || node.encoding === 'quoted-printable' || node.contentType === 'message/rfc822';
}

function isTextual(node: MimeNode): boolean {
  const type = node.contentType || 'text/plain';
  return type.startsWith('text/') || type.startsWith('message/') || /(?:json|xml|csv|calendar|vcard|javascript)/.test(type);
}

function decodeBody(encoding: string | false, body: Buffer): Buffer {
  if (encoding === 'base64') return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/]/g, ''), 'base64');
  if (encoding === 'quoted-printable') return libqp.decode(body);
  return body;
}

function encodeBody(encoding: string | false, body: Buffer): Buffer {
  if (encoding === 'base64') return Buffer.from(`${(body.toString('base64').match(/.{1,76}/g) ?? []).join('\r\n')}\r\n`, 'latin1');
  if (encoding === 'quoted-printable') return Buffer.from(`${libqp.wrap(libqp.encode(body), 76)}\r\n`, 'latin1');
  return body;
}

/**
 * Headers with RFC 2047 encoded-words: decoded as a whole (a name split over two words is found),
 * redacted, and written back, non-ASCII words encoded again. Plain parts were handled as bytes.
 */
function redactHeaders(node: MimeNode, text: Redactor, mode: 'always' | 'never', state: { strong: boolean; changed: boolean }): void {
  const headers = node.headers;
  if (!headers) return;
  for (const header of headers.getList()) {
    const colon = header.line.indexOf(':');
    if (colon < 0 || !/=\?[^?\s]{1,80}\?[bBqQ]\?/.test(header.line)) continue;
    const name = header.line.slice(0, colon);
    const value = header.line.slice(colon + 1).replace(/\r?\n(?=[ \t])/g, '');
    const decoded = libmime.decodeWords(value);
    const result = text.redact(decoded, { weak: mode });
    state.strong ||= result.strong;
    if (!result.changed) continue;
    const structured = /^(?:resent-)?(?:from|to|cc|bcc|reply-to|sender)$/i.test(name.trim());
    // A bare "[erased]" is not a valid display name in an address header; quoted, it is.
    const redacted = structured ? result.value.replace(/(^|[\s,:])\[erased\](?=\s*<)/g, `$1"${REDACTED_NAME}"`) : result.value;
    header.line = libmime.foldLines(`${name}: ${libmime.encodeWords(redacted.replace(/^[ \t]+/, ''), 'Q', 52)}`, 76, false);
    headers.changed = true;
    state.changed = true;
  }
}

/** Step 3: what the product's parser still finds, as a short reason (never the value). */
async function residualMention(raw: Buffer, text: Redactor, base64: string[]): Promise<string | null> {
  const parsed = await parseRawEmail(raw);
  if (!parsed.ok) {
    // Not a message: nothing can be decoded structurally, so a base64 spelling is all that is left to look for.
    const bytes = raw.toString('latin1');
    return text.mentions(bytes) || base64.some((form) => bytes.includes(form)) ? 'unparseable and still mentions the customer' : null;
  }
  const email = parsed.email;
  const addresses: MailAddress[] = [...(email.from ? [email.from] : []), ...email.replyTo, ...email.to, ...email.cc];
  const places: Array<[string, string]> = [
    ['subject', email.subject],
    ['addresses', addresses.map((a) => `${a.name ?? ''} <${a.address ?? ''}>`).join(', ')],
    ['text', email.textPart ?? ''],
    ['html', email.html ?? ''],
    ['body', email.bodyText],
    ['attachment names', email.attachments.map((a) => a.filename ?? '').join(' ')],
    [
      'headers',
      [...email.rawHeaders.values()]
        .flat()
        .map((v) => libmime.decodeWords(v))
        .join('\n'),
    ],
  ];
  const found = places.find(([, value]) => text.mentions(value));
  return found ? `the ${found[0]} still mentioned the customer after rewriting` : null;
}

/**
 * A stand-in original built from the stored columns (already redacted): the message's identity
 * and text survive for the console and replay, the customer does not.
 */
function renderErasedOriginal(source: ErasedOriginalSource, reason: string): Promise<Buffer> {
  return new MailComposer({
    ...(source.fromAddress ? { from: { name: source.fromName ?? '', address: source.fromAddress } } : {}),
    ...(source.to.length > 0 ? { to: source.to } : {}),
    ...(source.cc.length > 0 ? { cc: source.cc } : {}),
    subject: source.subject,
    text: source.bodyText,
    messageId: source.messageId,
    ...(source.inReplyTo ? { inReplyTo: source.inReplyTo } : {}),
    ...(source.references.length > 0 ? { references: source.references } : {}),
    date: source.date ?? new Date(0),
    headers: { [ERASURE_HEADER]: `original replaced: ${reason}` },
  })
    .compile()
    .build();
}
