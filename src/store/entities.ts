import type { EntityKind } from '../mail/addresses.ts';
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
 * The entity an address belongs to, created on first contact. A linked address wins over the key
 * (an operator's `link` is deliberate); otherwise the key (address or company domain) decides.
 */
export async function resolveEntity(
  db: DbClient,
  address: string,
  identity: { kind: EntityKind; key: string },
  displayName: string | null,
): Promise<EntityRecord> {
  const linked = await findEntityByAddress(db, address);
  if (linked) return maybeRename(db, linked, displayName, identity.kind);
  let entity = await db.entity.findUnique({ where: { key: identity.key }, select: ENTITY_FIELDS });
  if (!entity) {
    try {
      entity = await db.entity.create({
        data: { id: newId('e'), kind: identity.kind, key: identity.key, name: identity.kind === 'person' ? displayName : identity.key },
        select: ENTITY_FIELDS,
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      entity = await db.entity.findUniqueOrThrow({ where: { key: identity.key }, select: ENTITY_FIELDS });
    }
  }
  await db.entityAddress.createMany({
    data: [{ id: newId('ea'), entityId: entity.id, address, displayName }],
    skipDuplicates: true,
  });
  return maybeRename(db, entity, displayName, identity.kind);
}

/** Keep the display name as the name until a better one is known: never overwrite a real name with nothing. */
async function maybeRename(db: DbClient, entity: EntityRecord, displayName: string | null, kind: EntityKind): Promise<EntityRecord> {
  if (kind !== 'person' || !displayName || entity.name) return entity;
  await db.entity.update({ where: { id: entity.id }, data: { name: displayName } });
  return { ...entity, name: displayName };
}
