import { describe, expect, it } from 'vitest';
import { scriptedEmbedding } from '../support/scripted-embeddings.ts';

const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('the scripted server embeddings', () => {
  it('are deterministic, unit length, and depend on the model', () => {
    const a = scriptedEmbedding('How do I get a refund?', 'm1');
    expect(scriptedEmbedding('How do I get a refund?', 'm1')).toEqual(a);
    expect(cos(a, a)).toBeCloseTo(1, 6);
    expect(cos(a, scriptedEmbedding('How do I get a refund?', 'm2'))).toBeLessThan(0.5);
  });
  it('bring synonyms together across words and languages', () => {
    const refund = scriptedEmbedding('refund', 'm');
    expect(cos(refund, scriptedEmbedding('money back', 'm'))).toBeGreaterThan(0.7);
    expect(cos(refund, scriptedEmbedding('Rückerstattung', 'm'))).toBeGreaterThan(0.5);
    expect(cos(refund, scriptedEmbedding('dark mode', 'm'))).toBeLessThan(0.3);
  });
  it('give an empty or wordless text the zero vector', () => {
    expect(scriptedEmbedding('', 'm').every((x) => x === 0)).toBe(true);
    expect(scriptedEmbedding('?!', 'm').every((x) => x === 0)).toBe(true);
  });
});
