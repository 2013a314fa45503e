/**
 * Which proxies' forwarding headers the console believes. `X-Forwarded-For`, `-Proto`, `-Host`
 * and RFC 7239 `Forwarded` are plain request headers anyone can send; they mean something only
 * when the peer of the TCP connection is a proxy the operator listed in CONSOLE_TRUSTED_PROXIES.
 * From anyone else they are ignored. Pure: no I/O.
 */
import { BlockList, isIP, isIPv4 } from 'node:net';

/** More hops than any real chain of proxies; the walk stops there instead of following a forged list. */
const MAX_HOPS = 32;
/** Longer forwarding headers are not read at all (Node's own header limit is 16 KB in total). */
const MAX_HEADER_LENGTH = 4096;

/**
 * An IP address in the form the console keys on: no brackets, no zone id, no port, and IPv4-mapped
 * IPv6 (`::ffff:192.0.2.1`, what a dual-stack socket reports for an IPv4 peer) as plain IPv4.
 * `null` for anything that is not an address (`unknown`, `_hidden`, a host name, garbage).
 */
export function normalizeAddress(value: string | undefined): string | null {
  if (value === undefined) return null;
  let text = value.trim();
  if (text.length === 0 || text.length > 100) return null;
  if (text.startsWith('[')) {
    // `[2001:db8::1]` or `[2001:db8::1]:8443`
    const close = text.indexOf(']');
    if (close === -1) return null;
    const rest = text.slice(close + 1);
    if (rest.length > 0 && !/^:\d{1,5}$/.test(rest)) return null;
    text = text.slice(1, close);
  } else if (text.indexOf(':') !== -1 && text.indexOf(':') === text.lastIndexOf(':') && text.includes('.')) {
    // `192.0.2.1:51234`, as some proxies (Azure's, IIS) write X-Forwarded-For
    const [address, port] = text.split(':') as [string, string];
    if (!/^\d{1,5}$/.test(port)) return null;
    text = address;
  }
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  const family = isIP(text);
  if (family === 0) return null;
  if (family === 4) return text;
  // The URL parser writes IPv6 in its canonical form, and an IPv4-mapped tail as two hex groups.
  const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Whether a CONSOLE_TRUSTED_PROXIES entry is an address or a CIDR block (`10.0.0.0/8`, `fd00::/8`). */
export function isAddressOrCidr(entry: string): boolean {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash === -1) return true;
  const prefix = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/** The proxies named in CONSOLE_TRUSTED_PROXIES (addresses and CIDR blocks, IPv4 and IPv6). */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly size: number;

  /** Throws on an entry that is neither an address nor a CIDR block (config validation catches it first). */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      if (!isAddressOrCidr(entry)) throw new Error(`not an address or CIDR block: ${JSON.stringify(entry)}`);
      const slash = entry.indexOf('/');
      const address = slash === -1 ? entry : entry.slice(0, slash);
      const type = isIPv4(address) ? 'ipv4' : 'ipv6';
      if (slash === -1) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(entry.slice(slash + 1)), type);
    }
    this.size = entries.length;
  }

  /** Whether this (already normalised) address is one of the trusted proxies. */
  trusts(address: string | null): boolean {
    if (address === null || this.size === 0) return false;
    return this.list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
  }
}

/** What trusted proxies say about the original request; every field is absent unless they said it. */
export interface ForwardedFacts {
  /** The client's address: the nearest hop that is not a trusted proxy. */
  client?: string;
  proto?: 'http' | 'https';
  /** The host the client asked for, unparsed (the host check parses it). */
  host?: string;
}

/** Splits on commas outside double quotes (RFC 7239 allows quoted strings with commas in them). */
function splitOutsideQuotes(value: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '\\' && quoted) i++;
    else if (ch === '"') quoted = !quoted;
    else if (ch === separator && !quoted) {
      parts.push(value.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(value.slice(start));
  return parts;
}

function unquote(value: string): string {
  const text = value.trim();
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) return text.slice(1, -1).replace(/\\(.)/g, '$1');
  return text;
}

/** RFC 7239 `Forwarded`: one record of lower-cased parameters per hop, left (client side) to right. */
export function parseForwardedHeader(value: string): Array<Record<string, string>> {
  if (value.length > MAX_HEADER_LENGTH) return [];
  return splitOutsideQuotes(value, ',')
    .slice(-MAX_HOPS)
    .map((element) => {
      const record: Record<string, string> = {};
      for (const pair of splitOutsideQuotes(element, ';')) {
        const eq = pair.indexOf('=');
        if (eq === -1) continue;
        const key = pair.slice(0, eq).trim().toLowerCase();
        if (key === 'for' || key === 'proto' || key === 'host' || key === 'by') record[key] = unquote(pair.slice(eq + 1));
      }
      return record;
    });
}

function commaList(value: string | undefined): string[] {
  if (value === undefined || value.length > MAX_HEADER_LENGTH) return [];
  return value
    .split(',')
    .slice(-MAX_HOPS)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * The client behind a chain of proxies: walking the hops from the right (the hop our peer added),
 * every trusted proxy is skipped and the first other address is the client. A hop that is not an
 * address (`unknown`, an obfuscated name, garbage) ends the walk at the last trusted proxy, so a
 * client cannot pick a fresh throttle bucket by writing nonsense.
 */
export function clientFromHops(peer: string, hops: readonly string[], proxies: TrustedProxies): string {
  let last = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const address = normalizeAddress(hops[i]);
    if (address === null) return last;
    if (!proxies.trusts(address)) return address;
    last = address;
  }
  return last;
}

function protoOf(value: string | undefined): 'http' | 'https' | undefined {
  const proto = value?.trim().toLowerCase();
  return proto === 'http' || proto === 'https' ? proto : undefined;
}

/**
 * What the peer's forwarding headers say, if the peer is a trusted proxy (else nothing).
 * `X-Forwarded-*` is read first, field by field, and `Forwarded` fills in what it lacks: the
 * `X-` family is what nginx, Caddy, Traefik and HAProxy set by default, and such a proxy passes a
 * client's own `Forwarded` header through untouched. Of proto and host, the rightmost value
 * counts: it is the one the nearest (trusted) proxy wrote.
 */
export function readForwarded(peer: string | null, header: (name: string) => string | undefined, proxies: TrustedProxies): ForwardedFacts {
  if (peer === null || !proxies.trusts(peer)) return {};
  const forwarded = parseForwardedHeader(header('forwarded') ?? '');
  const xfor = commaList(header('x-forwarded-for'));
  const hops = xfor.length > 0 ? xfor : forwarded.filter((r) => r.for !== undefined).map((r) => r.for!);
  const facts: ForwardedFacts = {};
  if (hops.length > 0) facts.client = clientFromHops(peer, hops, proxies);
  const xproto = commaList(header('x-forwarded-proto')).at(-1);
  const proto = xproto !== undefined ? protoOf(xproto) : protoOf(forwarded.at(-1)?.proto);
  if (proto) facts.proto = proto;
  const host = commaList(header('x-forwarded-host')).at(-1) ?? forwarded.at(-1)?.host;
  if (host !== undefined) facts.host = host;
  return facts;
}
