/**
 * The first thing every console request meets: the host check (DNS rebinding), and the view of the
 * request that later checks use. Behind a TLS-terminating proxy the console sees plain HTTP from
 * the proxy; the browser's Origin is `https://support.example.com`. So the origin a form post is
 * compared with, and whether cookies are `Secure`, come from CONSOLE_PUBLIC_URL or from a trusted
 * proxy's forwarding headers, never from headers anyone else sent.
 */
import type { MiddlewareHandler } from 'hono';
import type { ConsoleEnv, RequestView } from './context.ts';
import { HostAllowList, hostOfAddress, isWildcardHost, parseHost } from '../net/host-names.ts';
import { normalizeAddress, readForwarded, TrustedProxies } from '../net/trusted-proxies.ts';

export interface ConsoleSiteOptions {
  /** CONSOLE_PUBLIC_URL: the console's external origin, e.g. `https://support.example.com`. */
  publicUrl?: string | undefined;
  /** CONSOLE_TRUSTED_PROXIES: addresses or CIDR blocks whose forwarding headers are believed. */
  trustedProxies?: readonly string[];
  /** CONSOLE_ALLOWED_HOSTS: further host names the console answers to. */
  allowedHosts?: readonly string[];
  /** The address the server listens on (CONSOLE_HOST). */
  boundHost: string;
  /** The machine's own addresses; answered to when the server listens on all of them. */
  interfaceAddresses?: readonly string[];
}

/** The console's settings about where it is reached, built once at start. */
export interface ConsoleSite {
  readonly hosts: HostAllowList;
  readonly proxies: TrustedProxies;
  readonly publicUrl: URL | null;
}

export function consoleSite(options: ConsoleSiteOptions): ConsoleSite {
  const publicUrl = options.publicUrl ? new URL(options.publicUrl) : null;
  const names: string[] = [...(options.allowedHosts ?? [])];
  if (publicUrl) names.push(publicUrl.hostname);
  if (isWildcardHost(options.boundHost)) names.push(...(options.interfaceAddresses ?? []).map(hostOfAddress));
  else if (parseHost(hostOfAddress(options.boundHost))) names.push(hostOfAddress(options.boundHost));
  return { hosts: new HostAllowList(names), proxies: new TrustedProxies(options.trustedProxies ?? []), publicUrl };
}

export const MISDIRECTED_MESSAGE =
  'Misdirected request: this console does not answer to this host name. ' +
  'Open it at its own address, or add the name to CONSOLE_ALLOWED_HOSTS.';

/**
 * Refuses (421, plain text, before any session lookup) a request whose `Host`, request target
 * or trusted forwarded host is not one of the console's names, then records the request's view.
 */
export function requestGuard(site: ConsoleSite, onRefused: (host: string) => void = () => {}): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const url = new URL(c.req.url);
    // In-process requests (tests) carry no Host header; the Node server always fills the URL from it.
    const requested = c.req.header('host') ?? url.host;
    const peer = normalizeAddress(c.env?.incoming?.socket?.remoteAddress);
    const forwarded = readForwarded(peer, (name) => c.req.header(name), site.proxies);
    // An absolute-form target (`GET http://other/ HTTP/1.1`) makes the URL's host differ from Host: both must pass.
    for (const host of [requested, url.host, forwarded.host]) {
      if (host !== undefined && !site.hosts.allows(host)) {
        onRefused(host.slice(0, 100));
        return c.text(MISDIRECTED_MESSAGE, 421);
      }
    }
    const scheme = forwarded.proto ?? (url.protocol === 'https:' ? 'https' : 'http');
    // The host passed parseHost, so the URL parser gives the origin exactly as a browser writes it.
    const origin = new URL(`${scheme}://${forwarded.host ?? requested}`).origin;
    const view: RequestView = {
      client: forwarded.client ?? peer,
      origin,
      publicOrigin: site.publicUrl?.origin ?? null,
      secureCookies: site.publicUrl ? site.publicUrl.protocol === 'https:' : scheme === 'https',
    };
    c.set('request', view);
    await next();
  };
}
