import type { EntityKind } from '../mail/addresses.ts';
import { resolveEntityFrom } from '../mail/entity-resolution.ts';
import { newId } from '../ids.ts';
import type { DbClient } from './client.ts';
import { isUniqueViolation } from './client.ts';

export interface EntityRecord {
  id: string;
  kind: string;
  key: string;
  name: string | null;
}

const ENTITY_FIELDS = { id: true, kind: true, key: true, name: true } as const;

export async function findEntityByAddress(db: DbClient, address: string): Promise<EntityRecord | null> {
  const row = await db.entityAddress.findUnique({ where: { address }, select: { entity: { select: ENTITY_FIELDS } } });
  return row?.entity ?? null;
}

/** An entity by id, by key, or by one of its addresses: what an operator may type. */
export async function findEntity(db: DbClient, ref: string): Promise<EntityRecord | null> {
  const trimmed = ref.trim();
  return (
    (await db.entity.findUnique({ where: { id: trimmed }, select: ENTITY_FIELDS })) ??
    (await db.entity.findUnique({ where: { key: trimmed.toLowerCase() }, select: ENTITY_FIELDS })) ??
    (await findEntityByAddress(db, trimmed.toLowerCase()))
  );
}

/**
 * The entity an address belongs to, created on first contact (rule: `resolveEntityFrom`). Used by
 * operator imports; ingestion does the same in two SQL round trips (`ingest-store.ts`).
 */
export async function resolveEntity(
  db: DbClient,
  address: string,
  identity: { kind: EntityKind; key: string },
  displayName: string | null,
): Promise<EntityRecord> {
  const linked = await findEntityByAddress(db, address);
  const byKey = linked ? null : await db.entity.findUnique({ where: { key: identity.key }, select: ENTITY_FIELDS });
  const plan = resolveEntityFrom({ linked, byKey, identity, displayName, newEntityId: newId('e') });
  let entity = plan.entity;
  if (plan.create) {
    try {
      entity = await db.entity.create({ data: plan.entity, select: ENTITY_FIELDS });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      entity = await db.entity.findUniqueOrThrow({ where: { key: identity.key }, select: ENTITY_FIELDS });
    }
  }
  if (plan.attachAddress) {
    await db.entityAddress.createMany({ data: [{ id: newId('ea'), entityId: entity.id, address, displayName }], skipDuplicates: true });
  }
  if (plan.rename) await db.entity.update({ where: { id: entity.id }, data: { name: plan.entity.name } });
  return entity;
}
