import { describe, expect, it } from 'vitest';
import { cleanDisplayName, entityKeyFor, foldPlusAddress, normaliseAddress } from '../../src/mail/addresses.ts';

describe('address normalisation', () => {
  it.each([
    ['  Alice.Okafor@Example.COM ', 'alice.okafor@example.com'],
    ['<bob@example.org>', 'bob@example.org'],
    ['kunde@bücher.example', 'kunde@xn--bcher-kva.example'],
    ['ops@example.com.', 'ops@example.com'],
  ])('%s becomes %s', (raw, expected) => {
    expect(normaliseAddress(raw)).toBe(expected);
  });

  it.each([
    '',
    'undisclosed-recipients:;',
    'no-at-sign',
    '@example.com',
    'alice@',
    'a b@example.com',
    'x@exa mple.com',
    'evil\r\n@example.com',
  ])('rejects %j', (raw) => {
    expect(normaliseAddress(raw)).toBeNull();
  });

  it('folds plus-addresses only when asked', () => {
    expect(normaliseAddress('Alice+Billing@example.com')).toBe('alice+billing@example.com');
    expect(normaliseAddress('Alice+Billing@example.com', { foldPlus: true })).toBe('alice@example.com');
    expect(foldPlusAddress('alice+x@example.com')).toBe('alice@example.com');
  });
});

describe('entity keys', () => {
  it('is the address by default', () => {
    expect(entityKeyFor('ann@globex.example', { mode: 'address' })).toEqual({ kind: 'person', key: 'ann@globex.example' });
  });

  it('groups a company domain in domain mode but never a free-mail domain', () => {
    expect(entityKeyFor('ann@globex.example', { mode: 'domain' })).toEqual({ kind: 'domain', key: 'globex.example' });
    expect(entityKeyFor('ann@gmail.com', { mode: 'domain' })).toEqual({ kind: 'person', key: 'ann@gmail.com' });
    expect(entityKeyFor('ann@isp.example', { mode: 'domain', extraFreeMailDomains: ['isp.example'] })).toEqual({
      kind: 'person',
      key: 'ann@isp.example',
    });
  });
});

describe('display names', () => {
  it('drops control characters that could inject headers', () => {
    expect(cleanDisplayName('Alice\r\nBcc: evil@example.com')).toBe('Alice Bcc: evil@example.com');
    expect(cleanDisplayName('   ')).toBeNull();
  });
});
