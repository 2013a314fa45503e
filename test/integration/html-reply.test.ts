/**
 * Replies as a mail client sends them, through the live pipeline: multipart/alternative with a
 * text and an HTML part rendered from the model's light Markdown, the signature in both, the
 * answered message quoted, and the Cc kept under the policy (src/memory/reply-cc.ts). Checked at
 * the SMTP sink (REPLY_MODE=send) and in Dovecot's Drafts folder (REPLY_MODE=draft).
 */
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { approveDraft } from '../../src/console/draft-actions.ts';
import { customerEmail, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';
import { startDovecot, type DovecotServer } from '../support/dovecot.ts';
import type { ReceivedMail } from '../support/smtp-sink.ts';

const SUPPORT = 'support@acme.example';
const TRUSTED = 'mx.acme.example';
const SIGNATURE = 'Acme Support <Team>\\nhttps://acme.example/help';
const BODY = [
  'Hello Alice,',
  '',
  'Thanks for writing. To export your workspace:',
  '',
  '1. open **Settings**',
  '2. choose *Export*',
  '',
  'The [export guide](https://acme.example/guide) has more; [this](javascript:alert(1)) is not a link.',
  '<script>alert(2)</script>',
].join('\n');

function dmarc(verdict: 'pass' | 'fail') {
  return { 'Authentication-Results': `${TRUSTED}; dmarc=${verdict} header.from=alicecorp.example` };
}

function header(mail: ReceivedMail, name: string): string {
  return mail.headers.get(name) ?? '';
}

describe('REPLY_MODE=send: at the SMTP sink', () => {
  let h: AgentHarness;

  beforeAll(async () => {
    h = await startAgentHarness({
      REPLY_SIGNATURE: SIGNATURE,
      TRUSTED_AUTHSERV_ID: TRUSTED,
      STAFF_ADDRESSES: 'ops@acme.example',
    });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(() => {
    h.llm.reset();
    h.llm.setFallback(() => ({ kind: 'json', content: turnAnswer({ body: BODY }) }));
  });

  /** The reply at the sink; a draft the gates held for a person (uncited steps) is approved as a reviewer would. */
  async function sentFor(messageId: string): Promise<ReceivedMail> {
    const draft = await waitFor(
      () => h.runtime.db.draft.findFirst({ where: { inReplyTo: messageId } }),
      (d) => d !== null && ['sent', 'draft', 'failed'].includes(d.status),
      20_000,
      `the reply to ${messageId}`,
    );
    if (draft!.status === 'draft') expect(await approveDraft(h.runtime, draft!.id)).toBe('done');
    await waitFor(
      () => h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft!.id } }),
      (d) => d.status === 'sent',
      20_000,
      `the reply to ${messageId} to be sent`,
    );
    const mail = h.smtp.messages.find((m) => m.headers.get('in-reply-to') === messageId);
    if (!mail) throw new Error(`no mail at the sink answers ${messageId}`);
    return mail;
  }

  it('sends text and HTML with the signature, the quoted original, and the Cc the authenticated customer chose', async () => {
    const messageId = '<html-1@alicecorp.example>';
    await h.ingest(
      customerEmail({
        from: 'Alice Ace <alice@alicecorp.example>',
        to: `${SUPPORT}, Bob Bee <bob@alicecorp.example>`,
        cc: [
          'Accountant <accountant@books.example>',
          'noreply@alicecorp.example',
          'SUPPORT@ACME.EXAMPLE',
          'support+billing@acme.example',
          'Ops@Acme.Example',
          'dev@lists.alicecorp.example',
          'bob@ALICECORP.example',
        ].join(', '),
        subject: 'Export question',
        body: 'How do I export my workspace?\n<b>not bold</b>',
        messageId,
        date: new Date('2026-11-30T09:15:00Z'),
        headers: dmarc('pass'),
      }),
    );
    const mail = await sentFor(messageId);

    // Envelope and headers: To the sender, Cc the two people she copied; nobody else, no Bcc.
    expect(mail.envelope.to.sort()).toEqual(['accountant@books.example', 'alice@alicecorp.example', 'bob@alicecorp.example']);
    expect(header(mail, 'to')).toBe('alice@alicecorp.example');
    expect(header(mail, 'cc')).toBe('bob@alicecorp.example, accountant@books.example');
    expect(mail.headers.has('bcc')).toBe(false);
    expect(header(mail, 'content-type')).toMatch(/^multipart\/alternative;/);

    // The text part: Markdown markers cleaned, the signature after "-- ", the original quoted.
    expect(mail.text).toContain('1. open Settings\n2. choose Export');
    expect(mail.text).toContain('The export guide <https://acme.example/guide> has more;');
    expect(mail.text).toContain('\n-- \nAcme Support <Team>\nhttps://acme.example/help\n');
    expect(mail.text).toContain(
      'On Mon, 30 Nov 2026 at 09:15 UTC, Alice Ace <alice@alicecorp.example> wrote:\n> How do I export my workspace?\n> <b>not bold</b>',
    );

    // The HTML part: rendered, escaped, only the safe link.
    expect(mail.html).toContain('<strong>Settings</strong>');
    expect(mail.html).toContain('<a href="https://acme.example/guide" rel="noopener noreferrer">export guide</a>');
    expect(mail.html).not.toMatch(/javascript:alert\(1\)"|<script>/);
    expect(mail.html).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(mail.html).toContain('-- <br>\nAcme Support &#60;Team&#62;<br>');
    expect(mail.html).toContain('<blockquote type="cite"');
    expect(mail.html).toContain('&#60;b&#62;not bold&#60;/b&#62;');

    // Stored with the draft, shown in the console.
    const draft = await h.runtime.db.draft.findFirstOrThrow({ where: { inReplyTo: messageId } });
    expect(draft.ccAddresses).toEqual(['bob@alicecorp.example', 'accountant@books.example']);
    expect(draft.body).toBe(BODY);
  });

  it('withholds the profile from a turn whose reply copies someone who is not the customer', async () => {
    const messageId = '<html-2@alicecorp.example>';
    await h.ingest(
      customerEmail({
        from: 'Alice Ace <alice@alicecorp.example>',
        cc: 'accountant@books.example',
        subject: 'Plan question',
        body: 'Which plan am I on?',
        messageId,
        headers: dmarc('pass'),
      }),
    );
    const mail = await sentFor(messageId);
    expect(header(mail, 'cc')).toBe('accountant@books.example');
    const prompt = h.llm.requests.find((r) => r.schemaName === 'message_turn' && JSON.stringify(r.body.messages).includes(messageId));
    expect(prompt!.body.messages.map((m) => String(m.content)).join('\n')).toMatch(/withheld/);
  });

  it('a forged From (no DMARC pass) copies no stranger; a failed DMARC copies nobody', async () => {
    const forged = '<html-3@evil.example>';
    await h.ingest(
      customerEmail({
        from: 'Alice Ace <alice@alicecorp.example>',
        cc: 'mallory@evil.example, bob@alicecorp.example',
        subject: 'Hi',
        body: 'What is on my account?',
        messageId: forged,
      }),
    );
    const first = await sentFor(forged);
    expect(first.envelope.to.sort()).toEqual(['alice@alicecorp.example', 'bob@alicecorp.example']);

    const failed = '<html-4@evil.example>';
    await h.ingest(
      customerEmail({
        from: 'Alice Ace <alice@alicecorp.example>',
        cc: 'mallory@evil.example, bob@alicecorp.example',
        subject: 'Hi again',
        body: 'Anything?',
        messageId: failed,
        headers: dmarc('fail'),
      }),
    );
    const second = await sentFor(failed);
    expect(second.envelope.to).toEqual(['alice@alicecorp.example']);
    expect(second.headers.has('cc')).toBe(false);
  });

  it('a huge Cc list is cut to REPLY_CC_MAX', async () => {
    const messageId = '<html-5@alicecorp.example>';
    await h.ingest(
      customerEmail({
        from: 'alice@alicecorp.example',
        cc: Array.from({ length: 300 }, (_, i) => `colleague${i}@alicecorp.example`).join(', '),
        subject: 'Team question',
        body: 'For all of us.',
        messageId,
      }),
    );
    const mail = await sentFor(messageId);
    expect(mail.envelope.to).toHaveLength(11);
  });
});

describe('REPLY_MODE=draft: the copy in the Drafts folder', () => {
  let dovecot: DovecotServer;
  let h: AgentHarness;

  beforeAll(async () => {
    dovecot = await startDovecot();
    h = await startAgentHarness({
      REPLY_MODE: 'draft',
      REPLY_SIGNATURE: SIGNATURE,
      IMAP_HOST: dovecot.host,
      IMAP_PORT: String(dovecot.imapPort),
      IMAP_SECURE: 'false',
      IMAP_USER: SUPPORT,
      IMAP_PASSWORD: 'support-pass',
    });
    h.llm.setFallback(() => ({ kind: 'json', content: turnAnswer({ body: BODY }) }));
  }, 90_000);
  afterAll(async () => {
    await h?.close();
    await dovecot?.destroy();
  });

  it('is the same multipart message a reviewer can send from their client, Cc included', async () => {
    const messageId = '<html-draft-1@alicecorp.example>';
    await h.ingest(
      customerEmail({
        from: 'Alice Ace <alice@alicecorp.example>',
        cc: 'bob@alicecorp.example, mallory@evil.example',
        subject: 'Draft question',
        body: 'Please help.',
        messageId,
      }),
    );
    const draft = await waitFor(
      () => h.runtime.db.draft.findFirst({ where: { inReplyTo: messageId } }),
      (d) => d !== null && d.imapAppendedAt !== null,
      30_000,
      'the draft in the Drafts folder',
    );
    expect(draft!.ccAddresses).toEqual(['bob@alicecorp.example']);
    const copies = (await dovecot.list(SUPPORT, 'Drafts')).filter((c) => c.raw.toString('utf8').includes(draft!.messageId));
    expect(copies).toHaveLength(1);
    const parsed = await simpleParser(copies[0]!.raw);
    expect(parsed.headers.get('content-type')).toMatchObject({ value: 'multipart/alternative' });
    expect(parsed.cc && !Array.isArray(parsed.cc) ? parsed.cc.value.map((a) => a.address) : []).toEqual(['bob@alicecorp.example']);
    expect(parsed.text).toContain('\n-- \nAcme Support <Team>');
    expect(parsed.text).toContain('> Please help.');
    expect(parsed.html).toContain('<strong>Settings</strong>');
    expect(parsed.html).toContain('<blockquote type="cite"');
    // A draft a person sends is not marked automatic.
    expect(parsed.headers.get('auto-submitted')).toBeUndefined();
  });
});
