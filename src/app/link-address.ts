/**
 * `support-agent link`: an address belongs to an existing customer. When the address had a
 * profile of its own with nothing else in it, that profile is merged into the target.
 */
import type { Db } from '../store/database.ts';
import { moveAddressToEntity } from '../store/entities.ts';

/** Links the address to the target customer; `merged` names the profile merged into it, if any. */
export async function linkAddress(db: Db, address: string, targetEntityId: string): Promise<{ merged: string | null }> {
  return moveAddressToEntity(db, address, targetEntityId);
}
