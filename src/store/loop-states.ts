/**
 * The loop guard's counters (`LoopState`) written by the rare paths that run on Prisma (a turn
 * that ends without a reply, a turn handed to a person); a reply turn writes them in its commit
 * statement (src/store/turn-sql.ts).
 */
import type { LoopState } from '../memory/loop-guard.ts';
import type { DbClient } from './client.ts';

export async function saveLoopStates(db: DbClient, states: readonly LoopState[]): Promise<void> {
  for (const s of states) {
    const data = {
      consecutive: s.consecutive,
      fingerprints: s.fingerprints,
      lastReply: s.lastReply,
      stoppedAt: s.stoppedAt,
      updatedAt: s.updatedAt,
    };
    await db.loopState.upsert({ where: { scope: s.scope }, create: { scope: s.scope, ...data }, update: data });
  }
}
