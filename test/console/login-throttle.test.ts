/**
 * The login throttle's decisions, on an injected clock: per address, growing delays, bounded
 * memory, and the operator still getting in while someone elsewhere guesses.
 */
import { describe, expect, it } from 'vitest';
import { LoginThrottle, throttleKey, type LoginThrottleOptions } from '../../src/console/login-throttle.ts';

function throttleAt(options: LoginThrottleOptions = {}) {
  const clock = { now: 1_000_000 };
  const throttle = new LoginThrottle({ now: () => clock.now, ...options });
  return { throttle, clock };
}

describe('LoginThrottle', () => {
  it('a few failures cost nothing; then every attempt waits a delay that doubles, up to the cap', () => {
    const { throttle, clock } = throttleAt({ freeFailures: 3, baseDelayMs: 1000, maxDelayMs: 8000 });
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const decision = throttle.check('203.0.113.7');
      expect(decision.allowed).toBe(true);
      throttle.recordFailure('203.0.113.7');
      const next = throttle.check('203.0.113.7');
      const wait = next.allowed ? 0 : next.retryAfterMs;
      waits.push(wait);
      clock.now += wait;
    }
    expect(waits).toEqual([0, 0, 1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('refuses an attempt that comes early, and says how long is left', () => {
    const { throttle, clock } = throttleAt({ freeFailures: 1, baseDelayMs: 10_000 });
    throttle.recordFailure('203.0.113.7');
    clock.now += 4000;
    expect(throttle.check('203.0.113.7')).toEqual({ allowed: false, retryAfterMs: 6000 });
    clock.now += 5999;
    expect(throttle.check('203.0.113.7').allowed).toBe(false);
    clock.now += 1;
    expect(throttle.check('203.0.113.7').allowed).toBe(true);
  });

  it('an attacker failing 25 times elsewhere does not delay the operator at all', () => {
    const { throttle, clock } = throttleAt();
    for (let i = 0; i < 25; i++) {
      throttle.recordFailure('198.51.100.66');
      clock.now += 10;
    }
    expect(throttle.check('198.51.100.66').allowed).toBe(false);
    expect(throttle.check('203.0.113.7')).toEqual({ allowed: true });
  });

  it('hammering from one address stays slow: 25 failures in a row leave a full minute between guesses', () => {
    const { throttle, clock } = throttleAt();
    for (let i = 0; i < 25; i++) {
      const decision = throttle.check('198.51.100.66');
      if (!decision.allowed) clock.now += decision.retryAfterMs;
      throttle.recordFailure('198.51.100.66');
    }
    expect(throttle.check('198.51.100.66')).toEqual({ allowed: false, retryAfterMs: 60_000 });
  });

  it('the operator who mistypes a few times waits seconds, and the right password clears the record', () => {
    const { throttle, clock } = throttleAt();
    for (let i = 0; i < 6; i++) throttle.recordFailure('203.0.113.7');
    const decision = throttle.check('203.0.113.7');
    expect(decision).toEqual({ allowed: false, retryAfterMs: 2000 });
    clock.now += 2000;
    expect(throttle.check('203.0.113.7').allowed).toBe(true);
    throttle.recordSuccess('203.0.113.7');
    expect(throttle.size).toBe(0);
    throttle.recordFailure('203.0.113.7');
    expect(throttle.check('203.0.113.7').allowed).toBe(true);
  });

  it('forgets an address after a quiet spell', () => {
    const { throttle, clock } = throttleAt({ freeFailures: 1, forgetAfterMs: 60_000, maxDelayMs: 1000 });
    for (let i = 0; i < 10; i++) throttle.recordFailure('203.0.113.7');
    clock.now += 60_001;
    expect(throttle.check('203.0.113.7').allowed).toBe(true);
    expect(throttle.size).toBe(0);
    // A failure after the quiet spell counts as the first again.
    throttle.recordFailure('203.0.113.7');
    expect(throttle.check('203.0.113.7')).toEqual({ allowed: false, retryAfterMs: 1000 });
  });

  it('keeps at most maxTracked addresses, dropping the least recently failed first', () => {
    const { throttle, clock } = throttleAt({ freeFailures: 1, maxTracked: 100 });
    for (let i = 0; i < 1000; i++) {
      throttle.recordFailure(`198.51.${Math.floor(i / 250)}.${i % 250}`);
      clock.now += 1;
    }
    expect(throttle.size).toBe(100);
    expect(throttle.check('198.51.0.0').allowed).toBe(true);
    expect(throttle.check('198.51.3.249').allowed).toBe(false);
    // A repeated failure moves an address to the young end, so it survives the next evictions.
    throttle.recordFailure('198.51.3.150');
    for (let i = 0; i < 99; i++) throttle.recordFailure(`192.0.2.${i}`);
    expect(throttle.size).toBe(100);
    expect(throttle.check('198.51.3.150').allowed).toBe(false);
    expect(throttle.check('198.51.3.151').allowed).toBe(true);
  });

  it('drops expired addresses as it goes, so memory does not wait for the cap', () => {
    const { throttle, clock } = throttleAt({ forgetAfterMs: 60_000, maxDelayMs: 1000 });
    for (let i = 0; i < 50; i++) throttle.recordFailure(`198.51.100.${i}`);
    clock.now += 60_001;
    throttle.recordFailure('203.0.113.7');
    expect(throttle.size).toBe(1);
  });

  it('never overflows the delay, however many failures', () => {
    const { throttle } = throttleAt();
    expect(throttle.delayAfter(10_000)).toBe(60_000);
    expect(throttle.delayAfter(1)).toBe(0);
  });
});

describe('throttleKey', () => {
  it('keys IPv4 by the address', () => {
    expect(throttleKey('203.0.113.7')).toBe('203.0.113.7');
    expect(throttleKey('203.0.113.8')).toBe('203.0.113.8');
  });

  it('keys IPv6 by its /64, since one host owns all of it', () => {
    expect(throttleKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(throttleKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(throttleKey('2001:DB8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(throttleKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(throttleKey('::1')).toBe('0:0:0:0::/64');
    expect(throttleKey('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(throttleKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(throttleKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });

  it('puts unknown clients in one bucket', () => {
    expect(throttleKey(null)).toBe('unknown');
    expect(throttleKey(undefined)).toBe('unknown');
  });
});
