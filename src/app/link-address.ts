/**
 * `support-agent link`: an address belongs to an existing customer. When the address had a
 * profile of its own with nothing else in it, that profile is merged into the target, and the
 * written policy settles facts that now disagree (rule `merged-on-link`, visible in `why`).
 */
import { planLinkMerge, type MergeRetirement } from '../memory/link-merge.ts';
import type { PromotionPolicy } from '../memory/promotion-policy.ts';
import type { Db } from '../store/database.ts';
import { moveAddressToEntity } from '../store/entities.ts';

/** Links the address to the target customer; `merged` names the profile merged into it, if any. */
export async function linkAddress(
  db: Db,
  policy: PromotionPolicy,
  address: string,
  targetEntityId: string,
  now: Date = new Date(),
): Promise<{ merged: string | null; retired: MergeRetirement[] }> {
  return moveAddressToEntity(db, address, targetEntityId, (facts) => planLinkMerge(policy, facts), now);
}
