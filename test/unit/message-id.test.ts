import { describe, expect, it } from 'vitest';
import { agentMessageId, verifyAgentMessageId } from '../../src/mail/message-id.ts';

describe("the agent's Message-IDs", () => {
  const secret = 'a-test-secret-of-enough-length';

  it('carry a verifiable token for their thread', () => {
    const id = agentMessageId(secret, 't_abc-DEF_123', 'acme.example');
    expect(id).toMatch(/^<sa\.t_abc-DEF_123\.[^@]+@acme\.example>$/);
    expect(verifyAgentMessageId(secret, id)).toEqual({ threadId: 't_abc-DEF_123' });
  });

  it('reject a guessed or altered ID', () => {
    const id = agentMessageId(secret, 't_victim', 'acme.example');
    expect(verifyAgentMessageId('another-secret-entirely', id)).toBeNull();
    expect(verifyAgentMessageId(secret, id.replace('t_victim', 't_other1'))).toBeNull();
    expect(verifyAgentMessageId(secret, '<sa.t_victim.AAAAAAAAAAAA.0123456789abcdef0123@acme.example>')).toBeNull();
    expect(verifyAgentMessageId(secret, '<CAF123@mail.gmail.com>')).toBeNull();
  });
});
