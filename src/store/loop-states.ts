/**
 * The loop guard's counters (`LoopState`), read before a turn and written with its outcome.
 */
import type { LoopState } from '../memory/loop-guard.ts';
import { freshLoopState } from '../memory/loop-guard.ts';
import type { DbClient } from './client.ts';

function numberLists(value: unknown): number[][] {
  return Array.isArray(value) ? value.filter(Array.isArray).map((list) => numbers(list)) : [];
}

function numbers(value: unknown): number[] {
  return Array.isArray(value) ? value.filter((n): n is number => typeof n === 'number') : [];
}

/** The states of these scopes, fresh ones for scopes never seen. */
export async function loadLoopStates(db: DbClient, scopes: readonly string[], now: Date): Promise<LoopState[]> {
  const rows = await db.loopState.findMany({ where: { scope: { in: [...scopes] } } });
  const byScope = new Map(rows.map((r) => [r.scope, r]));
  return scopes.map((scope) => {
    const row = byScope.get(scope);
    if (!row) return freshLoopState(scope, now);
    return {
      scope,
      consecutive: row.consecutive,
      fingerprints: numberLists(row.fingerprints),
      lastReply: numbers(row.lastReply),
      stoppedAt: row.stoppedAt,
      updatedAt: row.updatedAt,
    };
  });
}

export async function saveLoopStates(db: DbClient, states: readonly LoopState[]): Promise<void> {
  for (const s of states) {
    const data = { consecutive: s.consecutive, fingerprints: s.fingerprints, lastReply: s.lastReply, stoppedAt: s.stoppedAt, updatedAt: s.updatedAt };
    await db.loopState.upsert({ where: { scope: s.scope }, create: { scope: s.scope, ...data }, update: data });
  }
}
