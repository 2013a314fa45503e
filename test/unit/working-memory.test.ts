import { describe, expect, it } from 'vitest';
import { applyPins, applyTurnUpdate, buildCompressionPrompt, compressSummary, MAX_PINNED_ITEMS } from '../../src/memory/thread-state.ts';
import { countTokens } from '../../src/memory/tokens.ts';

const state = { subject: 's', summary: '', openItems: [], currentIntent: '', tags: [], pinnedItems: ['WS-48213'], status: 'open' };
const update = { summary: 'x', openItems: [], currentIntent: 'q', tags: [], pin: [], unpin: [], resolved: false };

describe('pinned items', () => {
  it('stay pinned when the model does not repeat them, leave only when unpinned, and are compared case-insensitively', () => {
    expect(applyTurnUpdate(state, update, 100).state.pinnedItems).toEqual(['WS-48213']);
    expect(applyTurnUpdate(state, { ...update, pin: ['ws-48213', 'INV-5120'] }, 100).state.pinnedItems).toEqual(['ws-48213', 'INV-5120']);
    expect(applyTurnUpdate(state, { ...update, unpin: ['ws-48213'] }, 100).state.pinnedItems).toEqual([]);
    // A resolved thread keeps its pins until promotion closes it.
    expect(applyTurnUpdate(state, { ...update, resolved: true }, 100).state.pinnedItems).toEqual(['WS-48213']);
  });

  it('hold at most ten, the oldest dropped first and reported', () => {
    const many = Array.from({ length: 12 }, (_, i) => `ORD-${1000 + i}`);
    const { pinned, dropped } = applyPins(['WS-48213'], many, []);
    expect(pinned).toHaveLength(MAX_PINNED_ITEMS);
    expect(dropped).toEqual(['WS-48213', 'ORD-1000', 'ORD-1001']);
    expect(pinned.at(-1)).toBe('ORD-1011');
    // Re-pinning moves an item to the end, so what the model keeps naming goes last.
    expect(applyPins(['A-100', 'B-200'], ['A-100'], []).pinned).toEqual(['B-200', 'A-100']);
  });
});

describe('summary compression', () => {
  const sentences = [
    'The customer reported that workspace WS-48213 cannot sync.',
    ...Array.from({ length: 40 }, (_, i) => `On day ${i + 2} the sync client stopped again and the customer asked for news.`),
  ];
  const long = sentences.join(' ');

  it('keeps the sentence that names a pinned item, then the most recent ones, under the cap', () => {
    const cut = compressSummary(long, 80, ['WS-48213']);
    expect(countTokens(cut)).toBeLessThanOrEqual(80);
    expect(cut).toContain('WS-48213');
    expect(cut).toContain('On day 41');
    expect(cut.indexOf('WS-48213')).toBeLessThan(cut.indexOf('On day 41'));
    // Without the pin, recency alone drops it.
    expect(compressSummary(long, 80)).not.toContain('WS-48213');
  });

  it('applies the cut when the model overruns the cap, and the pinned list is untouched by it', () => {
    const next = applyTurnUpdate(state, { ...update, summary: long.replace('WS-48213', 'the main workspace') }, 80).state;
    expect(countTokens(next.summary)).toBeLessThanOrEqual(80);
    expect(next.pinnedItems).toEqual(['WS-48213']);
  });

  it('asks the model for a rewrite that keeps the pinned and open items', () => {
    const prompt = buildCompressionPrompt({ summary: long, capTokens: 120, pinned: ['WS-48213'], openItems: ['check the sync client'] });
    expect(prompt.system).toContain('at most 120 tokens');
    expect(prompt.system).toMatch(/Keep every pinned item verbatim/);
    expect(prompt.user).toContain('- WS-48213');
    expect(prompt.user).toContain('- check the sync client');
  });
});
