import { describe, expect, it } from 'vitest';
import { decideThread, headerIdsInPreferenceOrder, type CandidateThread, type ThreadingInput } from '../../src/mail/threading.ts';

const aliceThread: CandidateThread = {
  id: 't_alice',
  entityId: 'e_alice',
  participants: new Set(['alice@example.com', 'bob@example.com']),
};
const carolThread: CandidateThread = { id: 't_carol', entityId: 'e_carol', participants: new Set(['carol@example.org']) };

function input(overrides: Partial<ThreadingInput>): ThreadingInput {
  return {
    senderAddress: 'alice@example.com',
    senderEntityId: 'e_alice',
    headerIds: [],
    matches: [],
    threads: new Map([
      ['t_alice', aliceThread],
      ['t_carol', carolThread],
    ]),
    subjectMatch: null,
    isForward: false,
    ...overrides,
  };
}

describe('thread decisions', () => {
  it('a reply joins its thread by headers', () => {
    const decision = decideThread(input({ headerIds: ['<a>'], matches: [{ messageId: '<a>', threadId: 't_alice', kind: 'seen' }] }));
    expect(decision).toEqual({ kind: 'join', threadId: 't_alice', via: 'headers' });
  });

  it("the agent's own outbound ID wins over other header matches", () => {
    const decision = decideThread(
      input({
        headerIds: ['<in>', '<out>'],
        matches: [
          { messageId: '<in>', threadId: 't_carol', kind: 'seen' },
          { messageId: '<out>', threadId: 't_alice', kind: 'outbound' },
        ],
      }),
    );
    expect(decision).toMatchObject({ kind: 'join', threadId: 't_alice' });
  });

  it('a reply from a CC’d colleague joins the thread', () => {
    const decision = decideThread(
      input({
        senderAddress: 'bob@example.com',
        senderEntityId: 'e_bob',
        headerIds: ['<a>'],
        matches: [{ messageId: '<a>', threadId: 't_alice', kind: 'seen' }],
      }),
    );
    expect(decision).toMatchObject({ kind: 'join', threadId: 't_alice' });
  });

  it('a stranger replying by headers gets a new thread linked to the old one', () => {
    const decision = decideThread(
      input({
        senderAddress: 'mallory@evil.example',
        senderEntityId: 'e_mallory',
        headerIds: ['<a>'],
        matches: [{ messageId: '<a>', threadId: 't_alice', kind: 'referenced' }],
      }),
    );
    expect(decision).toEqual({ kind: 'new', linkedThreadId: 't_alice', reason: 'replied by headers but is not a participant' });
  });

  it('falls back to the same entity’s subject match, but never for a forward', () => {
    expect(decideThread(input({ subjectMatch: { threadId: 't_alice' } }))).toEqual({ kind: 'join', threadId: 't_alice', via: 'subject' });
    expect(decideThread(input({ subjectMatch: { threadId: 't_alice' }, isForward: true }))).toMatchObject({
      kind: 'new',
      linkedThreadId: null,
    });
  });

  it('starts a new thread when nothing matches', () => {
    expect(decideThread(input({}))).toMatchObject({ kind: 'new', linkedThreadId: null });
  });

  it('prefers In-Reply-To, then the newest reference', () => {
    expect(headerIdsInPreferenceOrder(['<p>'], ['<root>', '<mid>', '<p>'])).toEqual(['<p>', '<mid>', '<root>']);
  });
});
