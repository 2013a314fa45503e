import { describe, expect, it } from 'vitest';
import { cosineTopK, reciprocalRankFusion, RRF_K, unitVector } from '../../src/memory/vector-rank.ts';

const v = (...xs: number[]) => unitVector(xs)!;

describe('unitVector', () => {
  it('scales to unit length', () => {
    const u = v(3, 4);
    expect(u[0]).toBeCloseTo(0.6, 6);
    expect(u[1]).toBeCloseTo(0.8, 6);
  });
  it('refuses vectors with no direction or non-finite values', () => {
    expect(unitVector([0, 0, 0])).toBeNull();
    expect(unitVector([])).toBeNull();
    expect(unitVector([Number.NaN, 1])).toBeNull();
    expect(unitVector([Number.POSITIVE_INFINITY, 1])).toBeNull();
  });
  it('takes 32-bit floats as stored', () => {
    expect(unitVector(new Float32Array([0, 2]))).toEqual(new Float32Array([0, 1]));
  });
});

describe('cosineTopK', () => {
  const vectors = [
    { id: 'a', vector: v(1, 0) },
    { id: 'b', vector: v(1, 1) },
    { id: 'c', vector: v(0, 1) },
    { id: 'd', vector: v(-1, 0) },
  ];
  it('ranks by cosine, best first, keeping only the limit', () => {
    const hits = cosineTopK(v(1, 0.1), vectors, 2);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b']);
    expect(hits[0]!.score).toBeCloseTo(1 / Math.sqrt(1.01), 5);
  });
  it('drops opposite and orthogonal-below-threshold vectors; ties break by id', () => {
    expect(cosineTopK(v(1, 0), vectors, 10).map((h) => h.id)).toEqual(['a', 'b', 'c']);
    const tied = [
      { id: 'z', vector: v(1, 0) },
      { id: 'y', vector: v(1, 0) },
      { id: 'x', vector: v(1, 0) },
    ];
    expect(cosineTopK(v(1, 0), tied, 2).map((h) => h.id)).toEqual(['x', 'y']);
  });
  it('skips vectors of another length (a model change half done) and handles empty input and limit 0', () => {
    expect(cosineTopK(v(1, 0), [{ id: 'x', vector: v(1, 0, 0) }, ...vectors], 1).map((h) => h.id)).toEqual(['a']);
    expect(cosineTopK(v(1, 0), [], 5)).toEqual([]);
    expect(cosineTopK(v(1, 0), vectors, 0)).toEqual([]);
  });
  it('matches a sort of all scores on many random vectors', () => {
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const many = Array.from({ length: 500 }, (_, i) => ({ id: `p${i}`, vector: v(...Array.from({ length: 16 }, rand)) }));
    const query = v(...Array.from({ length: 16 }, rand));
    const dot = (a: Float32Array) => a.reduce((s, x, i) => s + x * query[i]!, 0);
    const expected = many
      .map((m) => ({ id: m.id, score: dot(m.vector) }))
      .filter((m) => m.score >= 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, 20)
      .map((m) => m.id);
    expect(cosineTopK(query, many, 20).map((h) => h.id)).toEqual(expected);
  });
});

describe('reciprocalRankFusion', () => {
  it('sums 1/(k + rank) over the rankings', () => {
    const fused = reciprocalRankFusion([
      ['a', 'b', 'c'],
      ['c', 'a'],
    ]);
    expect(fused.map((f) => f.id)).toEqual(['a', 'c', 'b']);
    expect(fused[0]).toEqual({ id: 'a', score: 1 / (RRF_K + 1) + 1 / (RRF_K + 2), ranks: [1, 2] });
    expect(fused[2]).toEqual({ id: 'b', score: 1 / (RRF_K + 2), ranks: [2, null] });
  });
  it('an item both rankings hold in the middle beats one only the top of a single ranking holds', () => {
    const fused = reciprocalRankFusion([
      ['x', 'm'],
      ['y', 'm'],
    ]);
    expect(fused[0]!.id).toBe('m');
  });
  it('breaks equal scores by the best rank, then by id, so the order is stable', () => {
    const fused = reciprocalRankFusion([
      ['b', 'a'],
      ['a', 'b'],
    ]);
    expect(fused.map((f) => f.id)).toEqual(['a', 'b']);
    expect(reciprocalRankFusion([['q'], ['p']]).map((f) => f.id)).toEqual(['p', 'q']);
  });
  it('counts an id repeated within one ranking once, at its first rank', () => {
    const [only] = reciprocalRankFusion([['a', 'a', 'a']]);
    expect(only).toEqual({ id: 'a', score: 1 / (RRF_K + 1), ranks: [1] });
  });
  it('is the single ranking when the other is empty (embeddings found nothing)', () => {
    expect(reciprocalRankFusion([['a', 'b'], []]).map((f) => [f.id, f.ranks])).toEqual([
      ['a', [1, null]],
      ['b', [2, null]],
    ]);
    expect(reciprocalRankFusion([[], []])).toEqual([]);
  });
  it('honours another k', () => {
    expect(reciprocalRankFusion([['a']], 0)[0]!.score).toBe(1);
  });
});
