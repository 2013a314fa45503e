import { describe, expect, it } from 'vitest';
import { trustedAuthVerdict } from '../../src/mail/auth-results.ts';

describe('Authentication-Results', () => {
  const trusted = 'mx.acme.example';

  it('reads the verdict of the trusted authserv-id', () => {
    const verdict = trustedAuthVerdict(
      [
        'mx.acme.example; dkim=pass header.d=example.com (good signature); spf=softfail smtp.mailfrom=example.com; dmarc=fail (p=reject) header.from=example.com',
      ],
      trusted,
    );
    expect(verdict).toEqual({ dkim: 'pass', spf: 'softfail', dmarc: 'fail' });
  });

  it('ignores a forged header from another authserv-id, even above the trusted one', () => {
    const verdict = trustedAuthVerdict(['evil.example; dmarc=pass; dkim=pass', 'mx.acme.example 1; dmarc=fail'], trusted);
    expect(verdict.dmarc).toBe('fail');
    expect(verdict.dkim).toBeNull();
  });

  it('knows nothing without a configured authserv-id or a matching header', () => {
    expect(trustedAuthVerdict(['mx.acme.example; dmarc=pass'], undefined)).toEqual({ dmarc: null, dkim: null, spf: null });
    expect(trustedAuthVerdict(['other.example; dmarc=pass'], trusted)).toEqual({ dmarc: null, dkim: null, spf: null });
  });

  it('counts one passing DKIM signature among several', () => {
    expect(trustedAuthVerdict(['mx.acme.example; dkim=fail header.d=a.example; dkim=pass header.d=b.example'], trusted).dkim).toBe('pass');
  });
});
