// node-mbox ships no types: the part of its API the evaluation uses.
declare module 'node-mbox' {
  import type { Readable, Transform } from 'node:stream';

  /** Splits an mbox stream into messages (Buffers, without the `From ` postmark line). */
  export function MboxStream(input: Readable, options?: { includeMboxHeader?: boolean }): Transform;
}
