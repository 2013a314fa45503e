import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/app/runtime.ts';
import { passwordMatches, safeNextPath } from '../../src/console/auth.ts';
import { startConsole } from '../../src/console/server.ts';
import { isAppError } from '../../src/errors.ts';

describe('console login', () => {
  it('compares passwords of any length without throwing', () => {
    expect(passwordMatches('correct horse', 'correct horse')).toBe(true);
    expect(passwordMatches('correct horse', 'correct hors')).toBe(false);
    expect(passwordMatches('correct horse', '')).toBe(false);
    expect(passwordMatches('correct horse', 'x'.repeat(10_000))).toBe(false);
  });

  it('only redirects to paths on this site after login', () => {
    expect(safeNextPath('/threads/t_1?x=1')).toBe('/threads/t_1?x=1');
    expect(safeNextPath('//evil.example/')).toBe('/drafts');
    expect(safeNextPath('https://evil.example/')).toBe('/drafts');
    expect(safeNextPath('/\\evil.example')).toBe('/drafts');
    expect(safeNextPath(undefined)).toBe('/drafts');
  });

  it('will not start without CONSOLE_PASSWORD', async () => {
    const runtime = { config: { console: { host: '127.0.0.1', port: 3000, password: undefined } } } as unknown as Runtime;
    const error = await startConsole(runtime, { port: 0 }).catch((e: unknown) => e);
    expect(isAppError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toMatch(
      /^the console needs CONSOLE_PASSWORD \(on a loopback CONSOLE_HOST, `support-agent console` opens with a one-time link instead\)$/,
    );
  });
});
