import { describe, expect, it } from 'vitest';
import { messageTurnSchema } from '../../src/llm/contracts.ts';
import { checkContract } from '../../src/llm/openai-provider.ts';

const answer = (body: string) =>
  JSON.stringify({
    reply: { body, needsHuman: false },
    summary: 's',
    openItems: ['a\u0000'],
    currentIntent: 'q',
    tags: [],
    resolved: false,
  });

describe('checking a structured answer', () => {
  it('accepts a valid answer, without NUL characters the database could not store', () => {
    const checked = checkContract(messageTurnSchema, answer('Hello\u0000 there'), 'stop', null);
    expect(checked).toEqual({
      ok: true,
      value: expect.objectContaining({ reply: { body: 'Hello there', needsHuman: false }, openItems: ['a'] }),
    });
  });

  it('says what is wrong, in words the model can act on', () => {
    expect(checkContract(messageTurnSchema, 'not json', 'stop', null)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^not JSON/),
    });
    expect(checkContract(messageTurnSchema, '{"reply":{}}', 'stop', null)).toMatchObject({
      ok: false,
      error: expect.stringContaining('reply.body'),
    });
    expect(checkContract(messageTurnSchema, answer('x'), 'length', null)).toEqual({
      ok: false,
      error: 'the answer was cut off (finish_reason=length)',
    });
    expect(checkContract(messageTurnSchema, answer('x'), 'stop', 'I cannot help')).toEqual({
      ok: false,
      error: 'the model refused: I cannot help',
    });
  });
});
