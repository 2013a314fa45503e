import type { EntityKind } from '../mail/addresses.ts';
import type { MergeFact, MergeRetirement } from '../memory/link-merge.ts';
import type { FactCategory } from '../memory/types.ts';
import { resolveEntityFrom } from '../mail/entity-resolution.ts';
import { newId } from '../ids.ts';
import type { DbClient } from './client.ts';
import type { Db } from './database.ts';
import { isUniqueViolation } from './client.ts';

export interface EntityRecord {
  id: string;
  kind: string;
  key: string;
  name: string | null;
}

const ENTITY_FIELDS = { id: true, kind: true, key: true, name: true } as const;

async function findEntityByAddress(db: DbClient, address: string): Promise<EntityRecord | null> {
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

/** The facts a merge retires, decided from the merged profile's active facts (see `planLinkMerge`). */
export type MergePlanner = (facts: MergeFact[]) => MergeRetirement[];

/**
 * Gives an address to an entity, in one transaction. When the address belonged to another
 * entity that has no address left, that entity's threads, messages, participations, facts,
 * decisions and commitments become the target's and the empty entity goes: its id is returned.
 * The merged profile's conflicting facts are then settled by `plan`: each retired fact is
 * superseded by the one kept, with a `merged-on-link` entry in the decision trail.
 */
export async function moveAddressToEntity(
  db: Db,
  address: string,
  targetEntityId: string,
  plan: MergePlanner,
  now: Date,
): Promise<{ merged: string | null; retired: MergeRetirement[] }> {
  return db.$transaction(async (tx) => {
    const existing = await tx.entityAddress.findUnique({ where: { address }, select: { entityId: true } });
    if (existing?.entityId === targetEntityId) return { merged: null, retired: [] };
    if (!existing) {
      await tx.entityAddress.create({ data: { id: newId('ea'), entityId: targetEntityId, address } });
      return { merged: null, retired: [] };
    }
    const source = existing.entityId;
    await tx.entityAddress.update({ where: { address }, data: { entityId: targetEntityId } });
    const remaining = await tx.entityAddress.count({ where: { entityId: source } });
    if (remaining > 0) return { merged: null, retired: [] };
    const move = { where: { entityId: source }, data: { entityId: targetEntityId } };
    await tx.thread.updateMany(move);
    await tx.message.updateMany(move);
    await tx.threadParticipant.updateMany(move);
    await tx.profileFact.updateMany(move);
    await tx.promotionDecision.updateMany(move);
    await tx.commitment.updateMany(move);
    await tx.entity.delete({ where: { id: source } });
    const active = await tx.profileFact.findMany({
      where: { entityId: targetEntityId, status: 'active' },
      select: { id: true, key: true, value: true, category: true, origin: true, validFrom: true, createdAt: true, confidence: true },
    });
    const retired = plan(active.map((f) => ({ ...f, category: f.category as FactCategory, validFrom: f.validFrom ?? f.createdAt })));
    for (const r of retired) {
      const fact = active.find((f) => f.id === r.factId)!;
      await tx.profileFact.update({
        where: { id: r.factId },
        data: { status: 'superseded', validUntil: now, retiredAt: now, supersededById: r.keptFactId },
      });
      await tx.promotionDecision.create({
        data: {
          id: newId('pd'),
          entityId: targetEntityId,
          origin: 'link',
          key: r.key,
          value: r.value,
          category: fact.category,
          confidence: fact.confidence,
          explicit: true,
          evidence: `linked ${address}`,
          accepted: false,
          rule: 'merged-on-link',
          reason: r.reason,
          factId: r.factId,
          createdAt: now,
        },
      });
    }
    return { merged: source, retired };
  });
}
