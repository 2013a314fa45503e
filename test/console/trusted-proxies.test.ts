/**
 * Forwarding headers are believed only from the proxies the operator listed; a client cannot
 * forge its address, scheme or host through them, directly or through a proxy that appends.
 */
import { describe, expect, it } from 'vitest';
import {
  clientFromHops,
  isAddressOrCidr,
  normalizeAddress,
  parseForwardedHeader,
  readForwarded,
  TrustedProxies,
} from '../../src/net/trusted-proxies.ts';

const proxies = new TrustedProxies(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);

function headers(values: Record<string, string>): (name: string) => string | undefined {
  return (name) => values[name];
}

describe('normalizeAddress', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    [' 203.0.113.7 ', '203.0.113.7'],
    ['203.0.113.7:51234', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:203.0.113.7', '203.0.113.7'],
    ['0:0:0:0:0:ffff:cb00:7107', '203.0.113.7'],
    ['[::ffff:203.0.113.7]:80', '203.0.113.7'],
    ['2001:DB8:0:0::1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['[2001:db8::1]:8443', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['::1', '::1'],
  ])('%j is %s', (value, expected) => {
    expect(normalizeAddress(value)).toBe(expected);
  });

  it.each([
    undefined,
    '',
    'unknown',
    '_hidden',
    'localhost',
    'proxy.example',
    '203.0.113',
    '203.0.113.7:port',
    '203.0.113.7:123456',
    '[2001:db8::1',
    '[2001:db8::1]x',
    '1.2.3.4.5',
    'x'.repeat(200),
  ])('refuses %j', (value) => {
    expect(normalizeAddress(value)).toBeNull();
  });
});

describe('TrustedProxies', () => {
  it.each(['127.0.0.1', '10.1.2.3', '10.255.255.255', 'fd12::1', '::ffff:10.0.0.1'])('trusts %s', (address) => {
    expect(proxies.trusts(normalizeAddress(address))).toBe(true);
  });
  it.each(['127.0.0.2', '11.0.0.1', '9.255.255.255', '::1', 'fe80::1', '2001:db8::1'])('does not trust %s', (address) => {
    expect(proxies.trusts(normalizeAddress(address))).toBe(false);
  });
  it('trusts nobody when empty, and nothing unknown', () => {
    expect(new TrustedProxies([]).trusts('127.0.0.1')).toBe(false);
    expect(proxies.trusts(null)).toBe(false);
  });
  it('accepts addresses and CIDR blocks only', () => {
    for (const ok of ['127.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '::1', 'fd00::/8', '2001:db8::/128']) expect(isAddressOrCidr(ok)).toBe(true);
    for (const bad of ['', 'localhost', '10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/8/8', '10.0.0.0/-1', '10.0.0.0/08x', '*'])
      expect(isAddressOrCidr(bad)).toBe(false);
    expect(() => new TrustedProxies(['proxy.example'])).toThrow(/not an address/);
  });
});

describe('parseForwardedHeader (RFC 7239)', () => {
  it('reads one record per hop, quoted values and mixed case keys included', () => {
    expect(
      parseForwardedHeader('for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711";PROTO=https;host="a.example"'),
    ).toEqual([
      { for: '192.0.2.60', proto: 'http', by: '203.0.113.43' },
      { for: '[2001:db8:cafe::17]:4711', proto: 'https', host: 'a.example' },
    ]);
  });
  it('keeps commas and semicolons inside quotes', () => {
    expect(parseForwardedHeader('for="a,b;c";proto=https')).toEqual([{ for: 'a,b;c', proto: 'https' }]);
  });
  it('ignores parameters it does not use and pairs without a value', () => {
    expect(parseForwardedHeader('secret=1;for;proto=https')).toEqual([{ proto: 'https' }]);
  });
  it('does not read an oversized header', () => {
    expect(parseForwardedHeader(`for=1.2.3.4,${'for=5.6.7.8,'.repeat(1000)}`)).toEqual([]);
  });
});

describe('clientFromHops', () => {
  it('the first untrusted hop from the right is the client; forged hops to its left do not matter', () => {
    expect(clientFromHops('127.0.0.1', ['198.51.100.1', '203.0.113.7'], proxies)).toBe('203.0.113.7');
    expect(clientFromHops('127.0.0.1', ['198.51.100.1', '203.0.113.7', '10.0.0.2'], proxies)).toBe('203.0.113.7');
  });
  it('a chain of trusted proxies only gives the leftmost', () => {
    expect(clientFromHops('127.0.0.1', ['10.0.0.3', '10.0.0.2'], proxies)).toBe('10.0.0.3');
  });
  it('garbage ends the walk at the last trusted proxy, so it cannot pick a fresh address', () => {
    expect(clientFromHops('127.0.0.1', ['203.0.113.7', 'unknown'], proxies)).toBe('127.0.0.1');
    expect(clientFromHops('127.0.0.1', ['203.0.113.7', 'garbage', '10.0.0.2'], proxies)).toBe('10.0.0.2');
  });
});

describe('readForwarded', () => {
  const forged = headers({
    'x-forwarded-for': '198.51.100.9',
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'support.example.com',
    forwarded: 'for=198.51.100.10;proto=https;host=support.example.com',
  });

  it('ignores every forwarding header from a peer that is not a trusted proxy', () => {
    expect(readForwarded('203.0.113.7', forged, proxies)).toEqual({});
    expect(readForwarded('127.0.0.2', forged, proxies)).toEqual({});
    expect(readForwarded('::1', forged, proxies)).toEqual({});
    expect(readForwarded(null, forged, proxies)).toEqual({});
    expect(readForwarded('127.0.0.1', forged, new TrustedProxies([]))).toEqual({});
  });

  it('believes a trusted proxy: client, scheme and host', () => {
    expect(readForwarded('127.0.0.1', forged, proxies)).toEqual({ client: '198.51.100.9', proto: 'https', host: 'support.example.com' });
  });

  it('takes the values the nearest proxy wrote (rightmost) for scheme and host', () => {
    const appended = headers({
      'x-forwarded-for': '6.6.6.6, 203.0.113.7',
      'x-forwarded-proto': 'https, http',
      'x-forwarded-host': 'evil.example, support.example.com',
    });
    expect(readForwarded('10.0.0.2', appended, proxies)).toEqual({ client: '203.0.113.7', proto: 'http', host: 'support.example.com' });
  });

  it('prefers X-Forwarded-* to a Forwarded header the proxy may have passed through from the client', () => {
    const mixed = headers({
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-proto': 'https',
      forwarded: 'for=198.51.100.66;proto=http;host=evil.example',
    });
    expect(readForwarded('127.0.0.1', mixed, proxies)).toEqual({ client: '203.0.113.7', proto: 'https', host: 'evil.example' });
  });

  it('reads Forwarded when the proxy sends only that', () => {
    const standard = headers({ forwarded: 'for="[2001:db8::7]:4711";proto=https;host="support.example.com:8443"' });
    expect(readForwarded('fd00::1', standard, proxies)).toEqual({
      client: '2001:db8::7',
      proto: 'https',
      host: 'support.example.com:8443',
    });
  });

  it('an unknown scheme is no scheme; no headers at all say nothing', () => {
    expect(readForwarded('127.0.0.1', headers({ 'x-forwarded-proto': 'gopher' }), proxies)).toEqual({});
    expect(readForwarded('127.0.0.1', headers({}), proxies)).toEqual({});
  });

  it('the peer itself stands for a client whose proxy sent no address', () => {
    expect(readForwarded('127.0.0.1', headers({ 'x-forwarded-for': 'unknown' }), proxies)).toEqual({ client: '127.0.0.1' });
  });

  it('a hop list longer than any real chain is cut from the left, where forgeries sit', () => {
    const long = headers({ 'x-forwarded-for': [...Array.from({ length: 40 }, () => '10.0.0.9'), '203.0.113.7'].join(', ') });
    expect(readForwarded('127.0.0.1', long, proxies).client).toBe('203.0.113.7');
  });
});
