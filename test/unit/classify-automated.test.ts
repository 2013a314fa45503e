/**
 * The rules of automated-mail recognition, one signal at a time: structural signals decide alone,
 * weak ones only in pairs of different kinds, wording counts only in the mail's own text, and the
 * original Message-IDs and failure/delay are read from every place a report may carry them.
 */
import { describe, expect, it } from 'vitest';
import { classifyEmail, SKIP_REASONS, type Classification } from '../../src/mail/classify.ts';
import { parseRawEmail } from '../../src/mail/parse-message.ts';

const SUPPORT = 'support@acme.example';

interface MailSpec {
  from?: string;
  subject?: string;
  headers?: Record<string, string>;
  contentType?: string;
  body?: string;
  messageId?: string;
}

function raw(spec: MailSpec): string {
  return [
    `From: ${spec.from ?? 'Ana Lima <ana@customer.example>'}`,
    `To: ${SUPPORT}`,
    `Subject: ${spec.subject ?? 'Question about my invoice'}`,
    'Date: Tue, 15 Dec 2026 10:00:00 +0000',
    `Message-ID: ${spec.messageId ?? '<m1@customer.example>'}`,
    ...Object.entries(spec.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    'MIME-Version: 1.0',
    `Content-Type: ${spec.contentType ?? 'text/plain; charset=utf-8'}`,
    '',
    spec.body ?? 'Hello, my invoice 5512 shows the wrong amount. Can you fix it?',
    '',
  ].join('\r\n');
}

async function classify(spec: MailSpec | string): Promise<Classification> {
  const parsed = await parseRawEmail(Buffer.from(typeof spec === 'string' ? spec : raw(spec)));
  if (!parsed.ok) throw new Error(parsed.reason);
  return classifyEmail(parsed.email, { supportAddress: SUPPORT, isAgentMessageId: () => false });
}

const mixed = (parts: string[], boundary = 'b1') =>
  ({
    contentType: `multipart/mixed; boundary="${boundary}"`,
    body: `${parts.map((p) => `--${boundary}\r\n${p}`).join('\r\n')}\r\n--${boundary}--`,
  }) satisfies MailSpec;

const DSN_TEXT =
  'This message was created automatically by mail delivery software.\r\n\r\nA message that you sent could not be delivered to one or more of its recipients.\r\n\r\n  bob@gone.example\r\n    550 5.1.1 mailbox unavailable';

describe('structural signals decide on their own', () => {
  it.each<[string, MailSpec, string]>([
    [
      'a delivery-status part in multipart/mixed',
      mixed([
        'Content-Type: text/plain\r\n\r\nsorry',
        'Content-Type: message/delivery-status\r\n\r\nFinal-Recipient: rfc822; bob@gone.example\r\nAction: failed\r\nStatus: 5.1.1\r\n',
      ]),
      'bounce',
    ],
    [
      'a feedback-report part in multipart/mixed',
      mixed([
        'Content-Type: text/plain\r\n\r\nreport',
        'Content-Type: message/feedback-report\r\n\r\nFeedback-Type: abuse\r\nVersion: 1\r\n',
      ]),
      'complaint',
    ],
    [
      'multipart/report without report-type',
      { contentType: 'multipart/report; boundary="r"', body: '--r\r\nContent-Type: text/plain\r\n\r\nx\r\n--r--' },
      'bounce',
    ],
    [
      'a read receipt',
      {
        contentType: 'multipart/report; report-type=disposition-notification; boundary="r"',
        body: '--r\r\nContent-Type: text/plain\r\n\r\nread\r\n--r\r\nContent-Type: message/disposition-notification\r\n\r\nDisposition: manual-action/MDN-sent-manually; displayed\r\n--r--',
      },
      'auto-reply',
    ],
    ['X-Failed-Recipients', { headers: { 'X-Failed-Recipients': 'bob@gone.example' } }, 'bounce'],
    ['a MAILER_DAEMON sender', { from: 'MAILER_DAEMON@mx.example.net' }, 'bounce'],
    ['a Mailer.Daemon sender', { from: 'Mailer.Daemon@mx.example.net' }, 'bounce'],
    ['a VERP bounce sender', { from: 'bounces+991-ab=acme.example@em.example.net' }, 'bounce'],
    ["Exchange's system mailbox", { from: 'MicrosoftExchange329e71ec88ae4615bbc36ab6ce41109e@corp.example' }, 'bounce'],
    [
      'ARF fields in plain text',
      { body: 'Feedback-Type: abuse\r\nUser-Agent: SomeFBL/1.0\r\nVersion: 1\r\nSource-IP: 192.0.2.1' },
      'complaint',
    ],
    ['X-HmXmrOriginalRecipient', { headers: { 'X-HmXmrOriginalRecipient': '<x@hotmail.com>' } }, 'complaint'],
    [
      'an SES bounce JSON body',
      { body: '{"notificationType":"Bounce","bounce":{"bounceType":"Permanent"},"mail":{"messageId":"x"}}' },
      'bounce',
    ],
  ])('%s', async (_what, spec, reason) => {
    const c = await classify(spec);
    expect(c.skipReason).toBe(reason);
    expect(c.detail).toMatch(/\S/);
  });

  it('recognises a report from a sender without a usable address (Courier writes From: <@>) instead of calling it no-sender', async () => {
    const c = await classify({
      from: '"Courier mail server at mx.example" <@>',
      contentType: 'multipart/report; report-type=delivery-status; boundary="r"',
      body: '--r\r\nContent-Type: message/delivery-status\r\n\r\nAction: failed\r\n--r--',
    });
    expect(c.skipReason).toBe('bounce');
    expect((await classify({ from: '<@>' })).skipReason).toBe('no-sender');
  });

  it('a loop is still a loop: our own address or marks win over a report', async () => {
    expect((await classify({ from: SUPPORT, headers: { 'X-Failed-Recipients': 'x@y.example' } })).skipReason).toBe('loop');
  });
});

describe('weak signals never decide alone', () => {
  it.each<[string, MailSpec]>([
    ['a postmaster@ sender', { from: 'Erik <postmaster@bakery.example>' }],
    ['a post_master@ sender', { from: 'post_master@bakery.example' }],
    ['a bounce@ sender', { from: 'Bounce Park <bounce@jump.example>' }],
    ['an abuse@ sender', { from: 'abuse@hosting.example' }],
    ['a list-owner sender', { from: 'choir-owner@lists.example' }],
    ['a "Mail Delivery System" display name', { from: 'Mail Delivery System <ops@company.example>' }],
    ['a DSN subject', { subject: 'Undeliverable: Re: Order' }],
    ['a localised NDR subject', { subject: 'Unzustellbar: Rechnung' }],
    ['DSN wording in the body', { body: DSN_TEXT }],
    [
      'delivery-status fields in the body',
      { body: 'Our gateway says:\r\nFinal-Recipient: rfc822; x@y\r\nAction: failed\r\nStatus: 5.7.1\r\nPlease check your SPF.' },
    ],
    [
      'a returned copy of our own mail',
      mixed([
        'Content-Type: text/plain\r\n\r\nSee your answer attached.',
        `Content-Type: message/rfc822\r\n\r\nFrom: Acme <${SUPPORT}>\r\nMessage-ID: <ours@acme.example>\r\n\r\nHi`,
      ]),
    ],
    ['X-Auto-Response-Suppress: All', { headers: { 'X-Auto-Response-Suppress': 'All' } }],
    ['Auto-Submitted: no', { headers: { 'Auto-Submitted': 'no' } }],
  ])('%s', async (_what, spec) => {
    expect((await classify(spec)).skipReason).toBeNull();
  });

  it.each<[string, MailSpec, string]>([
    ['postmaster@ and a DSN subject', { from: 'postmaster@corp.example', subject: 'Undeliverable: Re: Order' }, 'bounce'],
    ['postmaster@ and DSN wording', { from: 'postmaster@corp.example', body: DSN_TEXT }, 'bounce'],
    ['a DSN subject and DSN wording', { subject: 'Mail delivery failed: returning message to sender', body: DSN_TEXT }, 'bounce'],
    ['postmaster@ and Auto-Submitted', { from: 'postmaster@corp.example', headers: { 'Auto-Submitted': 'auto-generated' } }, 'bounce'],
    [
      'a list owner and moderation wording',
      { from: 'news-bounces@lists.example', body: 'Your mail is being held until the list moderator can review it.' },
      'mailing-list',
    ],
    [
      'a list owner and rejection wording',
      { from: 'owner-news@lists.example', body: 'Non-member submission from [support@acme.example]' },
      'bounce',
    ],
    ['abuse@ and a feedback-loop subject', { from: 'abuse@isp.example', subject: 'Complaint about message from 192.0.2.5' }, 'complaint'],
  ])('but two of different kinds do: %s', async (_what, spec, reason) => {
    expect((await classify(spec)).skipReason).toBe(reason);
  });

  it('two signals of the same kind are still one kind (sender address and sender name)', async () => {
    expect((await classify({ from: 'Mail Delivery System <postmaster@corp.example>' })).skipReason).toBeNull();
  });
});

describe('wording counts only in the mail’s own text', () => {
  it('ignores DSN text after a forward separator and in quoted lines', async () => {
    const forwarded = `Why did my mail bounce?\r\n\r\n---------- Forwarded message ---------\r\n${DSN_TEXT}`;
    expect((await classify({ from: 'postmaster@smallco.example', body: forwarded })).skipReason).toBeNull();
    const outlook = `Please see below.\r\n\r\n________________________________\r\n${DSN_TEXT}`;
    expect((await classify({ from: 'postmaster@smallco.example', body: outlook })).skipReason).toBeNull();
    const quoted = `Is this about my order?\r\n\r\n${DSN_TEXT.split('\r\n')
      .map((l) => `> ${l}`)
      .join('\r\n')}`;
    expect((await classify({ from: 'postmaster@smallco.example', body: quoted })).skipReason).toBeNull();
    // The same text as the mail's own words, from the same sender, is a bounce.
    expect((await classify({ from: 'postmaster@smallco.example', body: DSN_TEXT })).skipReason).toBe('bounce');
  });

  it('does not read a report inside an attached message: a forwarded bounce is a question', async () => {
    const inner =
      'From: MAILER-DAEMON@mx.example\r\nSubject: Undelivered Mail Returned to Sender\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="in"\r\n\r\n--in\r\nContent-Type: message/delivery-status\r\n\r\nAction: failed\r\n--in--';
    const c = await classify(
      mixed(
        [
          'Content-Type: text/plain\r\n\r\nWhy did this bounce?',
          `Content-Type: message/rfc822\r\nContent-Disposition: inline\r\n\r\n${inner}`,
        ],
        'outer',
      ),
    );
    expect(c.skipReason).toBeNull();
  });

  it('a contact form with a Feedback-Type that is not an ARF type is a person writing', async () => {
    expect(
      (await classify({ body: 'Name: Laura\r\nFeedback-Type: complaint\r\nVersion: 2.4\r\nUser-Agent: Mozilla/5.0\r\nMessage: broken' }))
        .skipReason,
    ).toBeNull();
  });

  it('JSON with prose around it is a developer’s question, not a provider notification', async () => {
    const body = 'We get this from SES, do you handle it?\r\n{"notificationType":"Bounce","bounce":{},"mail":{}}';
    expect((await classify({ body })).skipReason).toBeNull();
    expect((await classify({ body: '{"error":"unprocessable","status":422}' })).skipReason).toBeNull();
  });
});

describe('what a report is about', () => {
  it('collects original Message-IDs from the returned headers, In-Reply-To and quoted lines, never its own', async () => {
    const spec = mixed([
      'Content-Type: text/plain\r\n\r\nDelivery has failed to these recipients or groups:\r\nx@y.example\r\nOriginal Message-ID: <quoted@acme.example>\r\nMessage-ID: <self@mx.example>',
      'Content-Type: message/delivery-status\r\n\r\nFinal-Recipient: rfc822; x@y.example\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 5.1.1 unknown\r\n   user\r\n',
      'Content-Type: text/rfc822-headers\r\n\r\nFrom: Acme <support@acme.example>\r\nMessage-ID:\r\n <returned@acme.example>\r\nIn-Reply-To: <not-this@customer.example>\r\n',
    ]);
    const c = await classify({
      ...spec,
      from: 'postmaster@y.example',
      messageId: '<self@mx.example>',
      headers: { 'In-Reply-To': '<irt@acme.example>' },
    });
    expect(c.skipReason).toBe('bounce');
    expect([...(c.report?.originalMessageIds ?? [])].sort()).toEqual([
      '<irt@acme.example>',
      '<quoted@acme.example>',
      '<returned@acme.example>',
    ]);
    expect(c.report?.failed).toBe(true);
    expect(c.report?.diagnostic).toBe('x@y.example: 5.1.1 smtp; 550 5.1.1 unknown user');
    expect(c.detail).toContain('about <');
  });

  it('tells failures from delays and successes by the per-recipient Action, whatever the wording says', async () => {
    const report = (actions: string[], subject = 'Delivery Status Notification') =>
      classify({
        from: 'MAILER-DAEMON@mx.example',
        subject,
        contentType: 'multipart/report; report-type=delivery-status; boundary="r"',
        body: `--r\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\n${actions.map((a, i) => `Final-Recipient: rfc822; r${i}@x.example\r\nAction: ${a}\r\nStatus: ${a === 'failed' ? '5.1.1' : '4.4.1'}\r\n`).join('\r\n')}--r--`,
      });
    expect((await report(['delayed', 'failed'])).report?.failed).toBe(true);
    expect((await report(['delayed', 'delayed'])).report?.failed).toBe(false);
    expect((await report(['delivered'])).report?.failed).toBe(false);
    expect((await report(['failed'], 'Delivery Status Notification (Delay)')).report?.failed).toBe(true);
    // Without machine-readable actions the wording decides.
    expect(
      (
        await classify({
          from: 'MAILER-DAEMON@mx.example',
          subject: 'Warning: could not send message for past 4 hours',
          body: 'THIS IS A WARNING MESSAGE ONLY',
        })
      ).report?.failed,
    ).toBe(false);
    expect(
      (await classify({ from: 'MAILER-DAEMON@mx.example', subject: 'Returned mail: User unknown', body: DSN_TEXT })).report?.failed,
    ).toBe(true);
  });

  it('reads provider Message-IDs only where they are the mail’s own (not Postmark’s or SparkPost’s internal IDs)', async () => {
    const sendgrid = await classify({
      body: JSON.stringify([{ event: 'bounce', email: 'x@y.example', 'smtp-id': '<sg@acme.example>', sg_event_id: 'e1', status: '5.1.1' }]),
    });
    expect(sendgrid.report?.originalMessageIds).toEqual(['<sg@acme.example>']);
    const mailgun = await classify({
      body: JSON.stringify({
        'event-data': { event: 'failed', severity: 'temporary', message: { headers: { 'message-id': 'mg@acme.example' } } },
      }),
    });
    expect(mailgun.report).toMatchObject({ originalMessageIds: ['<mg@acme.example>'], failed: false });
    const postmark = await classify({
      body: JSON.stringify({ RecordType: 'Bounce', Type: 'HardBounce', MessageID: '883953f4-6105-42a2-a16a-77a8eac79483' }),
    });
    expect(postmark.report).toMatchObject({ originalMessageIds: [], failed: true });
  });

  it('keeps at most ten original IDs', async () => {
    const body = `${DSN_TEXT}\r\n${Array.from({ length: 40 }, (_, i) => `Message-ID: <m${i}@acme.example>`).join('\r\n')}`;
    expect((await classify({ from: 'MAILER-DAEMON@mx.example', body })).report?.originalMessageIds).toHaveLength(10);
  });
});

describe('hostile input', () => {
  it('survives deeply nested and oversized JSON bodies without treating them as notifications', async () => {
    expect((await classify({ body: '['.repeat(200_000) })).skipReason).toBeNull();
    const big = JSON.stringify({ notificationType: 'Bounce', mail: {}, pad: 'x'.repeat(300 * 1024) });
    expect((await classify({ body: big })).skipReason).toBeNull();
    expect((await classify({ body: '{"Type":"Notification","Message":"{not json"}' })).skipReason).toBeNull();
  });

  it('reads a megabyte of report-like text without trouble', async () => {
    const line = 'Final-Recipient: rfc822; x@y.example Action: failed Status: 5.1.1 could not be delivered to one or more ';
    const c = await classify({ from: 'MAILER-DAEMON@mx.example', subject: `Undeliverable: ${'x'.repeat(900)}`, body: line.repeat(10_000) });
    expect(c.skipReason).toBe('bounce');
  });
});

it("adds 'complaint' to the skip reasons", () => {
  expect(SKIP_REASONS).toContain('complaint');
});
