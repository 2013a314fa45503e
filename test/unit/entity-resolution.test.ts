import { describe, expect, it } from 'vitest';
import { resolveEntityFrom, type EntityResolutionInput, type KnownEntity } from '../../src/mail/entity-resolution.ts';

const marcus: KnownEntity = { id: 'e_marcus', kind: 'person', key: 'marcus@outlook.com', name: 'Marcus Reid' };
const globex: KnownEntity = { id: 'e_globex', kind: 'domain', key: 'globex.example', name: 'globex.example' };

function input(overrides: Partial<EntityResolutionInput>): EntityResolutionInput {
  return {
    linked: null,
    byKey: null,
    identity: { kind: 'person', key: 'marcus@outlook.com' },
    displayName: 'Marcus Reid',
    newEntityId: 'e_new',
    ...overrides,
  };
}

describe('who a sender is', () => {
  it('a first contact creates a person named after the display name and attaches the address', () => {
    expect(resolveEntityFrom(input({}))).toEqual({
      entity: { id: 'e_new', kind: 'person', key: 'marcus@outlook.com', name: 'Marcus Reid' },
      create: true,
      attachAddress: true,
      rename: false,
    });
  });

  it('a company is named after its domain, never after the first colleague who writes', () => {
    const result = resolveEntityFrom(input({ identity: { kind: 'domain', key: 'globex.example' }, displayName: 'Hank Scorpio' }));
    expect(result.entity).toMatchObject({ kind: 'domain', name: 'globex.example' });
  });

  it('a known key is reused and a new address of it is attached', () => {
    const result = resolveEntityFrom(input({ byKey: globex, identity: { kind: 'domain', key: 'globex.example' } }));
    expect(result).toEqual({ entity: globex, create: false, attachAddress: true, rename: false });
  });

  it('a linked address wins over its own key, and is not attached again', () => {
    const result = resolveEntityFrom(input({ linked: marcus, byKey: globex, identity: { kind: 'domain', key: 'globex.example' } }));
    expect(result).toEqual({ entity: marcus, create: false, attachAddress: false, rename: false });
  });

  it('names a nameless person once a display name arrives, but never overwrites a real name or names one with nothing', () => {
    const nameless = { ...marcus, name: null };
    expect(resolveEntityFrom(input({ linked: nameless }))).toMatchObject({ rename: true, entity: { name: 'Marcus Reid' } });
    expect(resolveEntityFrom(input({ linked: marcus, displayName: 'Someone Else' }))).toMatchObject({
      rename: false,
      entity: { name: 'Marcus Reid' },
    });
    expect(resolveEntityFrom(input({ linked: nameless, displayName: null }))).toMatchObject({ rename: false, entity: { name: null } });
    expect(resolveEntityFrom(input({ linked: { ...globex, name: null }, displayName: 'Hank' }))).toMatchObject({ rename: false });
  });
});
