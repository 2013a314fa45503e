/**
 * A bounce of a reply the agent sent, through the live pipeline: the agent answers a customer
 * (REPLY_MODE=send, the SMTP sink), the reply bounces, and the report that comes back is skipped,
 * filed with the reply's thread, never answered, and marks the draft `bounced` with the
 * diagnostic. Reports about unknown mail, delays and complaints change no draft; lenient header
 * parsing is noted on the stored message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerEmail, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';

let h: AgentHarness;

beforeAll(async () => {
  h = await startAgentHarness();
  h.llm.setFallback((request) =>
    request.schemaName === 'thread_promotion'
      ? { kind: 'json', content: { topic: 't', facts: [], commitments: [] } }
      : { kind: 'json', content: turnAnswer({ body: 'Thanks, we are on it.' }) },
  );
}, 60_000);

afterAll(async () => {
  await h?.close();
});

/** A customer writes, the agent answers; returns the sent draft and the mail the SMTP server received. */
async function sentReply(from: string, subject: string) {
  const ingested = await h.ingest(customerEmail({ from, subject, body: 'Hello, where is my order?' }));
  const draft = await waitFor(
    () => h.runtime.db.draft.findFirst({ where: { threadId: ingested.threadId! } }),
    (d) => d?.status === 'sent',
    30_000,
    `the reply to ${from} to be sent`,
  );
  const mail = (await h.smtp.waitForMessages(h.smtp.messages.length)).find((m) => m.messageId === draft!.messageId);
  expect(mail, 'the SMTP server received the reply').toBeDefined();
  return { draft: draft!, threadId: ingested.threadId! };
}

function postfixDsn(originalMessageId: string, recipient: string, action: 'failed' | 'delayed', id: string): string {
  const status = action === 'failed' ? '5.1.1' : '4.4.1';
  return [
    'Return-Path: <>',
    'From: MAILER-DAEMON@mx.acme.example (Mail Delivery System)',
    'To: support@acme.example',
    `Subject: ${action === 'failed' ? 'Undelivered Mail Returned to Sender' : 'Delayed Mail (still being retried)'}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${id}@mx.acme.example>`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn"',
    '',
    '--dsn',
    'Content-Type: text/plain',
    '',
    'This is the mail system at host mx.acme.example.',
    '',
    `<${recipient}>: host mx.customer.example said: 550 5.1.1 User unknown`,
    '',
    '--dsn',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.acme.example',
    '',
    `Final-Recipient: rfc822; ${recipient}`,
    `Action: ${action}`,
    `Status: ${status}`,
    `Diagnostic-Code: smtp; ${action === 'failed' ? '550 5.1.1 <' + recipient + '>: Recipient address rejected: User unknown' : '451 4.4.1 try again later'}`,
    '',
    '--dsn',
    'Content-Type: text/rfc822-headers',
    '',
    'From: Acme Support <support@acme.example>',
    `To: ${recipient}`,
    `Message-ID: ${originalMessageId}`,
    '',
    '--dsn--',
    '',
  ].join('\r\n');
}

describe('a bounce of a reply the agent sent', () => {
  it('is skipped as a bounce, filed with the thread, never answered, and marks the draft bounced with the diagnostic', async () => {
    const { draft, threadId } = await sentReply('gone.customer@customer.example', 'Where is my order?');
    const llmCalls = h.llm.requests.length;
    const draftsBefore = await h.runtime.db.draft.count();

    const result = await h.ingest(postfixDsn(draft.messageId, 'gone.customer@customer.example', 'failed', 'dsn-1'));
    expect(result).toMatchObject({ outcome: 'skipped', skipReason: 'bounce', replyNeeded: false, threadId });
    expect(result.skipDetail).toContain(draft.messageId);

    const after = await h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } });
    expect(after.status).toBe('bounced');
    expect(after.error).toContain('gone.customer@customer.example: 5.1.1 smtp; 550 5.1.1');
    expect(after.error).toContain('<dsn-1@mx.acme.example>');
    const stored = await h.runtime.db.message.findFirstOrThrow({ where: { messageId: '<dsn-1@mx.acme.example>' } });
    expect(stored).toMatchObject({ status: 'skipped', skipReason: 'bounce', threadId });

    // Nothing answers it: no turn waits, no new draft, no model call.
    expect(await h.runtime.db.message.count({ where: { status: { in: ['pending_reply', 'in_turn'] } } })).toBe(0);
    expect(await h.runtime.db.draft.count()).toBe(draftsBefore);
    expect(h.llm.requests.length).toBe(llmCalls);

    // The same report delivered again is a duplicate and keeps the first diagnostic.
    const again = await h.ingest(postfixDsn(draft.messageId, 'gone.customer@customer.example', 'failed', 'dsn-1'));
    expect(again).toMatchObject({ stored: false, skipReason: 'duplicate' });
    expect((await h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } })).error).toBe(after.error);
  }, 60_000);

  it('a report about a Message-ID the agent never sent changes nothing', async () => {
    const before = await h.runtime.db.draft.findMany({ select: { id: true, status: true, error: true }, orderBy: { id: 'asc' } });
    const result = await h.ingest(postfixDsn('<not-ours-123@elsewhere.example>', 'someone@elsewhere.example', 'failed', 'dsn-unknown'));
    expect(result).toMatchObject({ outcome: 'skipped', skipReason: 'bounce', threadId: null });
    expect(await h.runtime.db.draft.findMany({ select: { id: true, status: true, error: true }, orderBy: { id: 'asc' } })).toEqual(before);
  });

  it('a delay notice and a complaint about a sent reply leave it sent', async () => {
    const { draft } = await sentReply('slow.server@customer.example', 'Invoice copy please');
    const delay = await h.ingest(postfixDsn(draft.messageId, 'slow.server@customer.example', 'delayed', 'dsn-delay'));
    expect(delay).toMatchObject({ outcome: 'skipped', skipReason: 'bounce' });
    expect(delay.skipDetail).toContain('not a final failure');

    const complaint = [
      'From: staff@hotmail.com',
      'To: support@acme.example',
      'Subject: complaint about message from 198.51.100.5',
      `Date: ${new Date().toUTCString()}`,
      'Message-ID: <jmrp-1@hotmail.example>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="j"',
      '',
      '--j',
      'Content-Type: text/plain',
      '',
      'This is an email abuse report for an email message received from IP 198.51.100.5.',
      '--j',
      'Content-Type: message/rfc822',
      'Content-Disposition: inline',
      '',
      'X-HmXmrOriginalRecipient: <reader@hotmail.com>',
      'From: Acme Support <support@acme.example>',
      `Message-ID: ${draft.messageId}`,
      '',
      'Thanks, we are on it.',
      '--j--',
      '',
    ].join('\r\n');
    expect(await h.ingest(complaint)).toMatchObject({ outcome: 'skipped', skipReason: 'complaint' });
    expect((await h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } })).status).toBe('sent');
  }, 60_000);

  it('a provider notification (SES through SNS) marks the draft it names', async () => {
    const { draft } = await sentReply('ses.bounce@customer.example', 'Password reset');
    const notification = {
      notificationType: 'Bounce',
      bounce: {
        bounceType: 'Permanent',
        bounceSubType: 'General',
        bouncedRecipients: [
          { emailAddress: 'ses.bounce@customer.example', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 no such user' },
        ],
      },
      mail: { messageId: '0102018c-ses', commonHeaders: { messageId: draft.messageId } },
    };
    const raw = [
      'From: AWS Notifications <no-reply@sns.amazonaws.com>',
      'To: support@acme.example',
      'Subject: AWS Notification Message',
      `Date: ${new Date().toUTCString()}`,
      'Message-ID: <sns-1@email.amazonses.com>',
      'Content-Type: text/plain; charset=UTF-8',
      '',
      JSON.stringify(notification),
      '',
    ].join('\r\n');
    expect(await h.ingest(raw)).toMatchObject({ outcome: 'skipped', skipReason: 'bounce' });
    const after = await h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } });
    expect(after.status).toBe('bounced');
    expect(after.error).toContain('ses.bounce@customer.example 5.1.1 smtp; 550 5.1.1 no such user');
  }, 60_000);

  it('notes lenient header repairs on a customer message and still answers it', async () => {
    const raw = `  \r\n\t\r\n${customerEmail({ from: 'leading.spaces@customer.example', subject: 'Spaces before my headers', body: 'Hi, can I change my plan?' })}`;
    const result = await h.ingest(raw);
    expect(result).toMatchObject({ outcome: 'processed', replyNeeded: true });
    const stored = await h.runtime.db.message.findUniqueOrThrow({ where: { id: result.id } });
    expect(stored.skipDetail).toBe('header section repaired: 2 blank or whitespace-only lines before the headers removed');
    expect(stored.fromAddress).toBe('leading.spaces@customer.example');
    await waitFor(
      () => h.runtime.db.draft.count({ where: { threadId: result.threadId! } }),
      (n) => n === 1,
      30_000,
      'the reply',
    );
  }, 60_000);
});
