/**
 * `support-agent link`: an address belongs to an existing customer. When the address had a
 * profile of its own with nothing else in it, that profile is merged into the target.
 */
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Db } from '../store/database.ts';

export async function linkAddress(db: Db, address: string, targetEntityId: string): Promise<{ merged: string | null }> {
  return db.$transaction(async (tx) => {
    const existing = await tx.entityAddress.findUnique({ where: { address } });
    if (existing?.entityId === targetEntityId) return { merged: null };
    if (!existing) {
      await tx.entityAddress.create({ data: { id: newId('ea'), entityId: targetEntityId, address } });
      return { merged: null };
    }
    const source = existing.entityId;
    await tx.entityAddress.update({ where: { address }, data: { entityId: targetEntityId } });
    const remaining = await tx.entityAddress.count({ where: { entityId: source } });
    if (remaining > 0) return { merged: null };
    // The old profile had only this address: its history and facts become the target's.
    await tx.thread.updateMany({ where: { entityId: source }, data: { entityId: targetEntityId } });
    await tx.message.updateMany({ where: { entityId: source }, data: { entityId: targetEntityId } });
    await tx.threadParticipant.updateMany({ where: { entityId: source }, data: { entityId: targetEntityId } });
    await tx.profileFact.updateMany({ where: { entityId: source }, data: { entityId: targetEntityId } });
    await tx.promotionDecision.updateMany({ where: { entityId: source }, data: { entityId: targetEntityId } });
    await tx.commitment.updateMany({ where: { entityId: source }, data: { entityId: targetEntityId } });
    await tx.entity.delete({ where: { id: source } });
    return { merged: source };
  });
}

export function assertNotSame(a: string, b: string): void {
  if (a === b) throw new AppError('USAGE', 'an address cannot be linked to itself');
}
