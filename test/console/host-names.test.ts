/**
 * The host check against DNS rebinding: which Host headers name the console, parsed the way an
 * attacker would try to confuse a parser.
 */
import { describe, expect, it } from 'vitest';
import { HostAllowList, hostOfAddress, isLoopbackHostname, isWildcardHost, parseHost } from '../../src/net/host-names.ts';

describe('parseHost', () => {
  it.each([
    ['support.example.com', 'support.example.com', null],
    ['Support.Example.COM', 'support.example.com', null],
    ['support.example.com.', 'support.example.com', null],
    ['SUPPORT.example.com.:8443', 'support.example.com', 8443],
    ['localhost:3000', 'localhost', 3000],
    ['127.0.0.1:65535', '127.0.0.1', 65535],
    ['[::1]', '[::1]', null],
    ['[::1]:3000', '[::1]', 3000],
    ['[0:0:0:0:0:0:0:1]:3000', '[::1]', 3000],
    ['[::FFFF:127.0.0.1]', '[::ffff:7f00:1]', null],
    ['[2001:DB8::1]:443', '[2001:db8::1]', 443],
    ['intranet_host', 'intranet_host', null],
    // Numeric IPv4 spellings end up as the address they mean, as browsers send them.
    ['2130706433', '127.0.0.1', null],
    ['0x7f.0.0.1', '127.0.0.1', null],
    ['127.1', '127.0.0.1', null],
  ])('%s is %s (port %s)', (value, hostname, port) => {
    expect(parseHost(value)).toEqual({ hostname, port });
  });

  it.each([
    [''],
    [':3000'],
    ['localhost:'],
    ['localhost:0'],
    ['localhost:65536'],
    ['localhost:3000@evil.example'],
    ['localhost@evil.example'],
    ['user:pass@localhost'],
    ['localhost:3000:3000'],
    ['localhost:+80'],
    ['localhost: 80'],
    [' localhost'],
    ['local host'],
    ['localhost/evil'],
    ['localhost\\evil'],
    ['localhost#x'],
    ['localhost?x'],
    ['local%68ost'],
    ['.'],
    ['..'],
    ['.localhost'],
    ['localhost..'],
    ['a..b'],
    ['évil.example'],
    ['localhost\u0000.evil.example'],
    ['evil.127'],
    ['256.0.0.1'],
    ['::1'],
    ['[::1'],
    ['::1]'],
    ['[]'],
    ['[::1]x'],
    ['[::1]:'],
    ['[::1]3000'],
    ['[fe80::1%eth0]'],
    ['[fe80::1%25eth0]'],
    ['[v1.fe]'],
    ['[127.0.0.1]'],
    ['[gggg::1]'],
    ['x'.repeat(301)],
  ])('refuses %j', (value) => {
    expect(parseHost(value)).toBeNull();
  });

  it('refuses a missing header', () => {
    expect(parseHost(undefined)).toBeNull();
  });
});

describe('isLoopbackHostname', () => {
  it.each(['localhost', '127.0.0.1', '127.255.0.9', '[::1]', '[::ffff:7f00:1]'])('%s is loopback', (name) => {
    expect(isLoopbackHostname(name)).toBe(true);
  });
  it.each(['localhost.evil.example', 'evil.localhost', '128.0.0.1', '10.0.0.1', '[::2]', '[::ffff:a00:1]', '0.0.0.0', '[::]'])(
    '%s is not',
    (name) => {
      expect(isLoopbackHostname(name)).toBe(false);
    },
  );
});

describe('HostAllowList', () => {
  const hosts = new HostAllowList(['support.example.com', '10.0.0.5', '[fd00::5]']);

  it.each([
    'localhost',
    'localhost:3000',
    'LOCALHOST:3000',
    'localhost.:3000',
    '127.0.0.1',
    '127.0.0.1:3000',
    '127.0.0.2:8080',
    '[::1]:3000',
    '[0::1]:3000',
    '[::ffff:127.0.0.1]:3000',
    'support.example.com',
    'support.example.com:443',
    'Support.Example.Com.',
    '10.0.0.5:3000',
    '[FD00::5]',
    '[fd00:0:0:0:0:0:0:5]:3000',
  ])('answers to %s', (value) => {
    expect(hosts.allows(value)).toBe(true);
  });

  it.each([
    'rebind.evil.example',
    'rebind.evil.example:3000',
    'evil.example',
    '127.0.0.1.evil.example',
    '127.0.0.1.nip.io',
    'localhost.evil.example',
    'evil.localhost',
    'support.example.com.evil.example',
    'evil-support.example.com',
    'xsupport.example.com',
    'example.com',
    'localhost:3000@evil.example',
    'support.example.com@evil.example',
    'evil.example#support.example.com',
    '10.0.0.6',
    '0.0.0.0:3000',
    '[::]:3000',
    '[fd00::6]',
    '',
    ' ',
  ])('refuses %j', (value) => {
    expect(hosts.allows(value)).toBe(false);
  });

  it('refuses a missing Host', () => {
    expect(hosts.allows(undefined)).toBe(false);
  });

  it('with no names configured answers to loopback only', () => {
    const bare = new HostAllowList([]);
    expect(bare.allows('localhost:3000')).toBe(true);
    expect(bare.allows('support.example.com')).toBe(false);
  });

  it('will not be configured with something that is not a host name', () => {
    expect(() => new HostAllowList(['https://support.example.com'])).toThrow(/not a host name/);
    expect(() => new HostAllowList(['*'])).toThrow(/not a host name/);
  });
});

describe('listening addresses', () => {
  it.each(['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0', ''])('%j is every address', (host) => {
    expect(isWildcardHost(host)).toBe(true);
  });
  it.each(['127.0.0.1', '::1', 'localhost', '10.0.0.5'])('%j is one address', (host) => {
    expect(isWildcardHost(host)).toBe(false);
  });
  it('writes IPv6 addresses in brackets and drops a zone id', () => {
    expect(hostOfAddress('::1')).toBe('[::1]');
    expect(hostOfAddress('fe80::1%eth0')).toBe('[fe80::1]');
    expect(hostOfAddress('10.0.0.5')).toBe('10.0.0.5');
  });
});
