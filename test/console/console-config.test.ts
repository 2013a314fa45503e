/** The console's proxy and host settings as the environment gives them. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    return (error as Error).message;
  }
  return '';
}

describe('console settings', () => {
  it('default to direct loopback use: no public URL, no trusted proxies, no extra host names', () => {
    expect(loadConfig({}).console).toMatchObject({ host: '127.0.0.1', publicUrl: undefined, trustedProxies: [], allowedHosts: [] });
  });

  it('keep the public URL as an origin', () => {
    expect(loadConfig({ CONSOLE_PUBLIC_URL: 'https://Support.Example.com/' }).console.publicUrl).toBe('https://support.example.com');
    expect(loadConfig({ CONSOLE_PUBLIC_URL: 'https://support.example.com:443' }).console.publicUrl).toBe('https://support.example.com');
    expect(loadConfig({ CONSOLE_PUBLIC_URL: 'https://support.example.com:8443' }).console.publicUrl).toBe(
      'https://support.example.com:8443',
    );
    expect(loadConfig({ CONSOLE_PUBLIC_URL: 'http://10.0.0.5:3000' }).console.publicUrl).toBe('http://10.0.0.5:3000');
  });

  it.each([
    'support.example.com',
    'ftp://support.example.com',
    'https://support.example.com/console',
    'https://user:pw@support.example.com',
    'https://support.example.com/?x=1',
    'https://support.example.com/#x',
  ])('refuses CONSOLE_PUBLIC_URL=%s, naming the variable', (value) => {
    expect(configError({ CONSOLE_PUBLIC_URL: value })).toMatch(/CONSOLE_PUBLIC_URL/);
  });

  it('reads trusted proxies as addresses and CIDR blocks', () => {
    expect(loadConfig({ CONSOLE_TRUSTED_PROXIES: '127.0.0.1, ::1,10.0.0.0/8 ,fd00::/8' }).console.trustedProxies).toEqual([
      '127.0.0.1',
      '::1',
      '10.0.0.0/8',
      'fd00::/8',
    ]);
    for (const bad of ['proxy.example', '10.0.0.0/33', '127.0.0.1,*', 'loopback'])
      expect(configError({ CONSOLE_TRUSTED_PROXIES: bad })).toMatch(/CONSOLE_TRUSTED_PROXIES/);
  });

  it('reads allowed hosts as host names without scheme or port', () => {
    expect(loadConfig({ CONSOLE_ALLOWED_HOSTS: 'console.internal, 10.0.0.5,[fd00::5],Support.Example.com.' }).console.allowedHosts).toEqual(
      ['console.internal', '10.0.0.5', '[fd00::5]', 'Support.Example.com.'],
    );
    for (const bad of ['https://console.internal', 'console.internal:3000', '*', 'console internal', 'a@b'])
      expect(configError({ CONSOLE_ALLOWED_HOSTS: bad })).toMatch(/CONSOLE_ALLOWED_HOSTS/);
  });
});
