/**
 * Which host names the console answers to: the defence against DNS rebinding. A page on
 * `rebind.evil.example` whose name is re-pointed at 127.0.0.1 can make a browser send requests to
 * the console that are same-origin for the attacker's page; the only thing that gives it away is
 * the `Host` header, so every request's host must be one the console was configured for.
 * Pure: no I/O, no clock.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** A host as the console compares it: lower case, no trailing dot, IP literals in canonical form. */
export interface ParsedHost {
  /** `support.example.com`, `127.0.0.1`, or `[::1]` (IPv6 keeps its brackets, as in a URL). */
  hostname: string;
  port: number | null;
}

/** Longer than any DNS name (253) plus brackets and a port: refused before any parsing. */
const MAX_HOST_LENGTH = 300;

function isNameChar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x30 && code <= 0x39) || // 0-9
    code === 0x2d || // -
    code === 0x2e || // .
    code === 0x5f // _ (not valid in DNS host names, but real intranet names carry it)
  );
}

function isIpv6Char(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x66) || (code >= 0x41 && code <= 0x46) || code === 0x3a || code === 0x2e
  );
}

function parsePort(text: string): number | null | undefined {
  if (text.length === 0 || text.length > 5) return undefined;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return undefined;
  }
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** The WHATWG URL parser canonicalises what is left (IPv4 in decimal or hex forms, IPv6 zero runs, case). */
function canonicalHostname(candidate: string): string | null {
  try {
    return new URL(`http://${candidate}/`).hostname;
  } catch {
    return null;
  }
}

/**
 * Parses a `Host` header (or an `X-Forwarded-Host`, or a configured name) strictly: a DNS name or
 * an IPv4 address, or an IPv6 address in brackets, then an optional port. Anything else (user
 * info such as `localhost:3000@evil`, paths, spaces, percent signs, IPv6 zone ids, empty labels,
 * an empty or zero port, non-ASCII) is refused with `null`, so the URL parser that canonicalises
 * the rest never gets to reinterpret it.
 */
export function parseHost(value: string | undefined): ParsedHost | null {
  if (value === undefined || value.length === 0 || value.length > MAX_HOST_LENGTH) return null;
  let name: string;
  let portText: string | null = null;
  if (value.charCodeAt(0) === 0x5b) {
    const close = value.indexOf(']');
    if (close < 3) return null;
    name = value.slice(0, close + 1);
    for (let i = 1; i < close; i++) if (!isIpv6Char(value.charCodeAt(i))) return null;
    if (!isIPv6(value.slice(1, close))) return null;
    const rest = value.slice(close + 1);
    if (rest.length > 0) {
      if (rest.charCodeAt(0) !== 0x3a) return null;
      portText = rest.slice(1);
    }
  } else {
    const colon = value.indexOf(':');
    if (colon !== -1) {
      if (value.indexOf(':', colon + 1) !== -1) return null;
      portText = value.slice(colon + 1);
    }
    name = colon === -1 ? value : value.slice(0, colon);
    if (name.length === 0) return null;
    for (let i = 0; i < name.length; i++) if (!isNameChar(name.charCodeAt(i))) return null;
    // One trailing dot is the fully qualified form of the same name; anything else empty is malformed.
    const bare = name.endsWith('.') ? name.slice(0, -1) : name;
    if (bare.length === 0 || bare.startsWith('.') || bare.endsWith('.') || bare.includes('..')) return null;
    name = bare;
  }
  let port: number | null = null;
  if (portText !== null) {
    const parsed = parsePort(portText);
    if (parsed === undefined) return null;
    port = parsed;
  }
  const hostname = canonicalHostname(name);
  if (hostname === null || hostname.length === 0) return null;
  return { hostname: hostname.endsWith('.') ? hostname.slice(0, -1) : hostname, port };
}

/** Strips the brackets of an IPv6 hostname as `parseHost` returns it. */
function bareAddress(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** `localhost`, any 127.0.0.0/8 address, `::1`, and IPv4-mapped forms of them. */
export function isLoopbackHostname(hostname: string): boolean {
  if (hostname === 'localhost') return true;
  const address = bareAddress(hostname);
  if (isIPv4(address)) return LOOPBACK.check(address, 'ipv4');
  if (isIPv6(address)) return LOOPBACK.check(address, 'ipv6');
  return false;
}

/**
 * The host names the console answers to. Ports are not compared: a rebinding attack is told apart
 * by the name, and a proxy may well reach the console on another port than the browser used.
 */
export class HostAllowList {
  private readonly names = new Set<string>();

  /**
   * @param names extra names: the public URL's host, the bound address, CONSOLE_ALLOWED_HOSTS,
   *   the machine's addresses when bound to all of them. Unparseable entries are refused.
   */
  constructor(names: Iterable<string>) {
    for (const name of names) {
      const parsed = parseHost(name);
      if (!parsed) throw new Error(`not a host name: ${JSON.stringify(name)}`);
      this.names.add(parsed.hostname);
    }
  }

  /** Whether a raw `Host` (or forwarded host) value names this console. Loopback forms always do. */
  allows(value: string | undefined): boolean {
    const parsed = parseHost(value);
    if (!parsed) return false;
    return isLoopbackHostname(parsed.hostname) || this.names.has(parsed.hostname);
  }

  /** The configured names, canonical (for the start-up log). */
  list(): string[] {
    return [...this.names];
  }
}

/** `0.0.0.0`, `::` and the empty host all mean "every address of this machine". */
export function isWildcardHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare === '' || bare === '0.0.0.0' || (isIPv6(bare) && canonicalHostname(`[${bare}]`) === '[::]');
}

/** A listening address or interface address as a host name (`::1` becomes `[::1]`). */
export function hostOfAddress(address: string): string {
  const bare = address.split('%')[0]!;
  return isIPv6(bare) ? `[${bare}]` : bare;
}
