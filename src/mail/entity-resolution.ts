/**
 * Who a sender is, decided from what the database already knows about the address and the key.
 * Pure, so the Prisma path (operator imports) and the SQL path (ingestion) follow one rule.
 */
import type { EntityKind } from './addresses.ts';

export interface KnownEntity {
  id: string;
  kind: string;
  key: string;
  name: string | null;
}

export interface EntityResolutionInput {
  /** The entity this exact address is attached to (an operator's `link` lands here). */
  linked: KnownEntity | null;
  /** The entity with the address's key (the address itself, or the company domain). */
  byKey: KnownEntity | null;
  identity: { kind: EntityKind; key: string };
  displayName: string | null;
  /** The id to use if a new entity is needed. */
  newEntityId: string;
}

export interface EntityResolution {
  entity: KnownEntity;
  /** No entity has this key yet: create `entity`. */
  create: boolean;
  /** The address is not attached to any entity yet: attach it to `entity`. */
  attachAddress: boolean;
  /** The entity had no name and the sender gave one: store it. */
  rename: boolean;
}

/**
 * A linked address wins over the key (a link is deliberate); otherwise the key decides, creating
 * the entity on first contact. A real name is never overwritten, and a company keeps its domain.
 */
export function resolveEntityFrom(input: EntityResolutionInput): EntityResolution {
  const found = input.linked ?? input.byKey;
  const base: KnownEntity = found ?? {
    id: input.newEntityId,
    kind: input.identity.kind,
    key: input.identity.key,
    name: input.identity.kind === 'person' ? input.displayName : input.identity.key,
  };
  const rename = found !== null && found.kind === 'person' && !found.name && Boolean(input.displayName);
  return {
    entity: rename ? { ...base, name: input.displayName } : base,
    create: found === null,
    attachAddress: input.linked === null,
    rename,
  };
}
