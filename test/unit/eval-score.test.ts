import { describe, expect, it } from 'vitest';
import { draftIdentifiers, scorePair, summarise } from '../../src/replay/eval-score.ts';

const base = {
  profileValues: [] as string[],
  agentNeedsHuman: false,
  teamNeedsHuman: null,
  promptTokens: 100,
  completionTokens: 20,
  modelCalls: 1,
};

describe('eval scores', () => {
  it('finds identifiers and numbers as words with a digit, without the punctuation around them', () => {
    expect(draftIdentifiers('Order A-1234 (49.90 EUR) ships 15/11. Call +81 90 1234, ok?')).toEqual([
      'A-1234',
      '49.90',
      '15/11',
      '81',
      '90',
      '1234',
    ]);
  });

  it('a draft is grounded only when every identifier is in its context, as whole words', () => {
    const score = scorePair({
      ...base,
      draft: 'Refund of 49.90 for A-1234 and 7319.',
      teamReply: '',
      context: 'order a-1234 cost 49.90, ref 73190',
    });
    expect(score.ungrounded).toEqual(['7319']);
    expect(score.grounded).toBe(false);
  });

  it('counts the profile facts a draft uses, and agreement only where the team labelled', () => {
    const score = scorePair({
      ...base,
      draft: 'Hello Alice, we will call in the evening.',
      teamReply: '',
      context: '',
      profileValues: ['Alice', 'in the evening', '+44 20 7946 0958'],
      agentNeedsHuman: true,
      teamNeedsHuman: true,
    });
    expect(score).toMatchObject({ factsHeld: 3, factsUsed: 2, needsHumanAgrees: true });
  });

  it('summarises: means, the median, rates over what can be scored', () => {
    const one = scorePair({ ...base, draft: 'a b c', teamReply: 'a b c', context: '', teamNeedsHuman: false });
    const two = scorePair({ ...base, draft: 'a b c', teamReply: 'a b d', context: '', profileValues: ['x'], modelCalls: 2 });
    const three = scorePair({ ...base, draft: 'nothing 5', teamReply: 'else', context: '', teamNeedsHuman: true });
    expect(summarise([one, two, three])).toEqual({
      pairs: 3,
      meanSimilarity: 0.5,
      medianSimilarity: 0.5,
      groundedRate: 0.667,
      factsUsedRate: 0,
      needsHumanAgreement: 0.5,
      meanPromptTokens: 100,
      meanCompletionTokens: 20,
      modelCallsPerTurn: 1.333,
    });
    expect(summarise([]).meanSimilarity).toBeNull();
  });
});
