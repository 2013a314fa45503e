/**
 * Ranking by meaning, pure: cosine similarity over stored vectors (brute force, one pass, a
 * bounded top-k kept as it goes) and reciprocal rank fusion of several rankings. No I/O.
 */

/** A vector ready for cosine: unit length, as 32-bit floats (the precision it is stored at). */
export function unitVector(values: ArrayLike<number>): Float32Array | null {
  let norm = 0;
  for (let i = 0; i < values.length; i++) norm += values[i]! * values[i]!;
  if (!(norm > 0) || !Number.isFinite(norm)) return null;
  const scale = 1 / Math.sqrt(norm);
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i]! * scale;
  return out;
}

export interface VectorHit {
  id: string;
  /** Cosine similarity, -1 … 1. */
  score: number;
}

/**
 * The `limit` vectors most similar to `query` (all unit length), best first, ties by id. Vectors
 * of another length than the query are skipped. Linear in the vectors, a top-k of `limit` kept
 * by insertion (limit is small: tens).
 */
export function cosineTopK(
  query: Float32Array,
  vectors: ReadonlyArray<{ id: string; vector: Float32Array }>,
  limit: number,
  minScore = 0,
): VectorHit[] {
  if (limit <= 0) return [];
  const top: VectorHit[] = [];
  const dims = query.length;
  for (const { id, vector } of vectors) {
    if (vector.length !== dims) continue;
    let dot = 0;
    for (let i = 0; i < dims; i++) dot += query[i]! * vector[i]!;
    if (dot < minScore) continue;
    if (top.length === limit && !better(dot, id, top[limit - 1]!)) continue;
    let at = top.length === limit ? limit - 1 : top.length;
    while (at > 0 && better(dot, id, top[at - 1]!)) at--;
    top.splice(at, 0, { id, score: dot });
    if (top.length > limit) top.pop();
  }
  return top;
}

function better(score: number, id: string, than: VectorHit): boolean {
  return score > than.score || (score === than.score && id < than.id);
}

/** The usual constant of reciprocal rank fusion (Cormack et al. 2009): damps the top ranks' weight. */
export const RRF_K = 60;

export interface FusedHit {
  id: string;
  /** Sum over the rankings of 1 / (k + rank), rank from 1. */
  score: number;
  /** The id's rank (from 1) in each input ranking, null where it is absent. */
  ranks: Array<number | null>;
}

/**
 * Reciprocal rank fusion: each ranking (ids best first) gives an id 1 / (k + rank); ids are
 * ordered by the sum, ties by their best rank, then by id. A ranking's repeated id counts once.
 */
export function reciprocalRankFusion(rankings: ReadonlyArray<readonly string[]>, k = RRF_K): FusedHit[] {
  const byId = new Map<string, FusedHit>();
  rankings.forEach((ranking, list) => {
    ranking.forEach((id, index) => {
      let hit = byId.get(id);
      if (!hit) {
        hit = { id, score: 0, ranks: rankings.map(() => null) };
        byId.set(id, hit);
      }
      if (hit.ranks[list] !== null) return;
      hit.ranks[list] = index + 1;
      hit.score += 1 / (k + index + 1);
    });
  });
  const bestRank = (h: FusedHit) => Math.min(...h.ranks.map((r) => r ?? Number.POSITIVE_INFINITY));
  return [...byId.values()].sort((a, b) => b.score - a.score || bestRank(a) - bestRank(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
