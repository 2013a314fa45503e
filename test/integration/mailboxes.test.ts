/**
 * Several mailboxes served by one agent (MAILBOXES_FILE): two Dovecot users, each with its own
 * poller, UID checkpoints, Drafts folder, reply mode and signature; one customer writing to both is
 * one customer, with a thread in each mailbox.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPollers } from '../../src/app/start-poller.ts';
import { createConsoleApp } from '../../src/console/app.ts';
import type { RecordedRequest } from '../support/scripted-llm-server.ts';
import { customerEmail, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';
import { startDovecot, type DovecotServer } from '../support/dovecot.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';

const SUPPORT = 'support@acme.example';
const BILLING = 'billing@acme.example';
let dovecot: DovecotServer;
let smtp: SmtpSink;
let h: AgentHarness;
let pollers: { stop(): Promise<void> };
let dir: string;

beforeAll(async () => {
  dovecot = await startDovecot({
    users: [
      { user: SUPPORT, password: 'support-pass' },
      { user: BILLING, password: 'billing-pass' },
    ],
  });
  smtp = await startSmtpSink();
  dir = mkdtempSync(path.join(tmpdir(), 'mailboxes-it-'));
  const file = path.join(dir, 'mailboxes.yaml');
  writeFileSync(
    file,
    `# Two mailboxes of one team
mailboxes:
  - address: ${SUPPORT}
    name: Acme Support
    imap: { host: ${dovecot.host}, port: ${dovecot.imapPort}, secure: false, password: "env:SUPPORT_IMAP_PASSWORD", pollInterval: 1s }
    replyMode: draft
    signature: |
      Acme Support team
      https://acme.example/help
    language: en
  - address: ${BILLING}
    name: Acme Billing
    imap: { host: ${dovecot.host}, port: ${dovecot.imapPort}, secure: false, password: billing-pass, pollInterval: 1s }
    smtp: { host: 127.0.0.1, port: ${smtp.port}, secure: false }
    replyMode: send
    signature: "Acme Billing - invoices@acme.example"
    language: de
`,
  );
  h = await startAgentHarness({
    MAILBOXES_FILE: file,
    SUPPORT_IMAP_PASSWORD: 'support-pass',
    // Mail between the served mailboxes proves it is the team's by an aligned DMARC pass.
    TRUSTED_AUTHSERV_ID: 'mx.acme.example',
    // The variables' own mailbox is replaced by the file's.
    SUPPORT_ADDRESS: 'unused@acme.example',
  });
  h.llm.setFallback((request: RecordedRequest) => ({
    kind: 'json',
    content: turnAnswer({ body: `Hello Carla,\n\nwe are on it (${mailboxOf(request)}).\n\nBest regards` }),
  }));
  pollers = startPollers(h.runtime, 'all');
}, 90_000);

afterAll(async () => {
  await pollers?.stop();
  await h?.close();
  await smtp?.close();
  await dovecot?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function systemPrompt(request: RecordedRequest): string {
  return String(request.body.messages.find((m) => m.role === 'system')?.content ?? '');
}

function mailboxOf(request: RecordedRequest): string {
  return systemPrompt(request).includes(`<${BILLING}>`) ? 'billing' : 'support';
}

function unfolded(raw: Buffer): string {
  return raw.toString('utf8').replace(/\r\n[ \t]+/g, ' ');
}

describe('two mailboxes served by one agent', () => {
  it('polls both, threads per mailbox, one customer, each mailbox its own reply mode, signature and checkpoints', async () => {
    expect(h.runtime.mailboxes.map((m) => m.mailbox.address)).toEqual([SUPPORT, BILLING]);
    expect(h.runtime.mailbox.address).toBe(SUPPORT);
    const sentBefore = smtp.messages.length;

    await dovecot.deliver(
      SUPPORT,
      customerEmail({
        from: 'Carla Rossi <carla@customer.example>',
        to: SUPPORT,
        subject: 'Where is my parcel?',
        body: 'My order 1001 has not arrived.',
        messageId: '<mb-support-1@customer.example>',
      }),
    );
    await dovecot.deliver(
      BILLING,
      customerEmail({
        from: 'Carla Rossi <carla@customer.example>',
        to: BILLING,
        subject: 'Invoice 77 is wrong',
        body: 'Invoice 77 charges me twice.',
        messageId: '<mb-billing-1@customer.example>',
      }),
    );

    // support@: draft mode, the draft lands in support's own Drafts folder with support's signature.
    const supportDraft = await waitFor(
      () => h.runtime.db.draft.findFirst({ where: { inReplyTo: '<mb-support-1@customer.example>' } }),
      (d) => d !== null && d.imapAppendedAt !== null,
      40_000,
      "support's draft in its Drafts folder",
    ).then((d) => d!);
    expect(supportDraft.status).toBe('draft');
    const supportDrafts = (await dovecot.list(SUPPORT, 'Drafts')).map((m) => unfolded(m.raw));
    const copy = supportDrafts.find((raw) => raw.includes(`Message-ID: ${supportDraft.messageId}`));
    expect(copy).toBeDefined();
    expect(copy).toContain('From: Acme Support <support@acme.example>');
    expect(copy).toContain('we are on it (support).');
    expect(copy).toContain('\r\n-- \r\nAcme Support team\r\nhttps://acme.example/help');
    expect(copy).not.toContain('Acme Billing');
    // The stored body is the model's text: the signature is the mailbox's, added on the way out.
    expect(supportDraft.body).not.toContain('Acme Support team');

    // billing@: send mode, sent over its SMTP with billing's signature, nothing in its Drafts folder.
    const [sent] = (await smtp.waitForMessages(sentBefore + 1, 40_000)).slice(sentBefore);
    expect(sent!.envelope.from).toBe(BILLING);
    expect(sent!.envelope.to).toEqual(['carla@customer.example']);
    expect(sent!.headers.get('from')).toBe('Acme Billing <billing@acme.example>');
    expect(sent!.headers.get('in-reply-to')).toBe('<mb-billing-1@customer.example>');
    expect(sent!.messageId).toMatch(/@acme\.example>$/);
    expect(sent!.text).toContain('we are on it (billing).');
    expect(sent!.text).toContain('\n-- \nAcme Billing - invoices@acme.example');
    expect(sent!.text).not.toContain('Acme Support team');
    const billingDraft = await waitFor(
      () => h.runtime.db.draft.findFirst({ where: { inReplyTo: '<mb-billing-1@customer.example>' } }),
      (d) => d !== null && d.status === 'sent',
      20_000,
      "billing's reply recorded as sent",
    ).then((d) => d!);
    expect(billingDraft.imapAppendedAt).toBeNull();
    expect((await dovecot.list(BILLING, 'Drafts').catch(() => [])).length).toBe(0);
    // Only support's reply went to support's Drafts; nothing else left either mailbox by SMTP.
    expect(smtp.messages.slice(sentBefore)).toHaveLength(1);

    // Each mailbox's language reached its own turns.
    const prompts = h.llm.requests.filter((r) => r.schemaName === 'message_turn').map(systemPrompt);
    expect(prompts.find((p) => p.includes(`<${SUPPORT}>`))).toContain('reply in en.');
    expect(prompts.find((p) => p.includes(`<${BILLING}>`))).toContain('reply in de.');

    // Threads are per mailbox; the customer is one.
    const [supportBox, billingBox] = h.runtime.mailboxes.map((m) => m.mailbox.id);
    const threads = await h.runtime.db.thread.findMany({
      orderBy: { createdAt: 'asc' },
      select: { id: true, mailboxId: true, entityId: true, subject: true },
    });
    expect(threads).toHaveLength(2);
    expect(new Set(threads.map((t) => t.mailboxId))).toEqual(new Set([supportBox, billingBox]));
    expect(threads.find((t) => t.id === supportDraft.threadId)!.mailboxId).toBe(supportBox);
    expect(threads.find((t) => t.id === billingDraft.threadId)!.mailboxId).toBe(billingBox);
    expect(new Set(threads.map((t) => t.entityId)).size).toBe(1);
    expect(await h.runtime.db.entity.count()).toBe(1);

    // Each mailbox its own checkpoints.
    const checkpoints = await h.runtime.db.mailboxCheckpoint.findMany({ where: { folder: 'INBOX' } });
    expect(checkpoints.map((c) => [c.mailboxId, Number(c.lastUid)]).sort()).toEqual(
      [
        [billingBox, 1],
        [supportBox, 1],
      ].sort(),
    );
    // No mailbox row for the unused variables' address.
    expect((await h.runtime.db.mailbox.findMany()).map((m) => m.address).sort()).toEqual([BILLING, SUPPORT]);
  }, 90_000);

  it("a second mail to one mailbox moves only that mailbox's checkpoint and stays in its thread", async () => {
    const before = await h.runtime.db.mailboxCheckpoint.findMany({ where: { folder: 'INBOX' } });
    const [supportBox, billingBox] = h.runtime.mailboxes.map((m) => m.mailbox.id);
    await dovecot.deliver(
      BILLING,
      customerEmail({
        from: 'Carla Rossi <carla@customer.example>',
        to: BILLING,
        subject: 'Re: Invoice 77 is wrong',
        body: 'Any news on invoice 77?',
        messageId: '<mb-billing-2@customer.example>',
        inReplyTo: '<mb-billing-1@customer.example>',
        references: '<mb-billing-1@customer.example>',
      }),
    );
    await waitFor(
      () => h.runtime.db.mailboxCheckpoint.findUnique({ where: { mailboxId_folder: { mailboxId: billingBox!, folder: 'INBOX' } } }),
      (c) => c !== null && Number(c.lastUid) === 2,
      30_000,
      "billing's checkpoint at UID 2",
    );
    const supportCheckpoint = await h.runtime.db.mailboxCheckpoint.findUnique({
      where: { mailboxId_folder: { mailboxId: supportBox!, folder: 'INBOX' } },
    });
    expect(Number(supportCheckpoint!.lastUid)).toBe(Number(before.find((c) => c.mailboxId === supportBox)!.lastUid));
    const message = await h.runtime.db.message.findFirst({ where: { messageId: '<mb-billing-2@customer.example>' } });
    const first = await h.runtime.db.message.findFirst({ where: { messageId: '<mb-billing-1@customer.example>' } });
    expect(message!.mailboxId).toBe(billingBox);
    expect(message!.threadId).toBe(first!.threadId);
  }, 60_000);

  it("the console filters drafts by mailbox and shows a thread's mailbox", async () => {
    const app = createConsoleApp(h.runtime, 'console-pass-0001');
    const base = 'http://127.0.0.1';
    const cookieOf = (response: Response, name: string) =>
      response.headers
        .getSetCookie()
        .find((c) => c.startsWith(`${name}=`))
        ?.split(';')[0];
    const form = await app.request(`${base}/login`);
    const token = /name="_login" value="([^"]+)"/.exec(await form.text())?.[1];
    const login = await app.request(`${base}/login`, {
      method: 'POST',
      headers: { cookie: cookieOf(form, 'sa_login')!, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: 'console-pass-0001', _login: token! }).toString(),
    });
    const cookie = cookieOf(login, 'sa_session')!;
    expect(cookie).toBeDefined();
    const page = async (url: string) => {
      const response = await app.request(`${base}${url}`, { headers: { cookie } });
      expect(response.status).toBe(200);
      return response.text();
    };
    const supportDraft = (await h.runtime.db.draft.findFirst({ where: { inReplyTo: '<mb-support-1@customer.example>' } }))!;
    const billingDraft = (await h.runtime.db.draft.findFirst({ where: { inReplyTo: '<mb-billing-1@customer.example>' } }))!;

    const all = await page('/drafts');
    expect(all).toContain('id="mailbox-select"');
    expect(all).toContain(`id="draft-${supportDraft.id}"`);
    expect(all).toContain(`id="handled-${billingDraft.id}"`);

    const ofSupport = await page(`/drafts?mailbox=${encodeURIComponent('Support@Acme.example')}`);
    expect(ofSupport).toContain(`id="draft-${supportDraft.id}"`);
    expect(ofSupport).not.toContain(`id="handled-${billingDraft.id}"`);
    expect(ofSupport).toMatch(/<option value="support@acme.example" selected>/);

    const ofBilling = await page(`/drafts?mailbox=${BILLING}`);
    expect(ofBilling).not.toContain(`id="draft-${supportDraft.id}"`);
    expect(ofBilling).toContain(`id="handled-${billingDraft.id}"`);

    // A mailbox that is not there shows nothing rather than everything; a malformed one is ignored.
    const unknown = await page('/drafts?mailbox=nobody%40acme.example');
    expect(unknown).not.toContain(`id="draft-${supportDraft.id}"`);
    expect(unknown).not.toContain(`id="handled-${billingDraft.id}"`);
    expect(await page('/drafts?mailbox=%3Cscript%3E')).toContain(`id="draft-${supportDraft.id}"`);

    const thread = await page(`/threads/${billingDraft.threadId}`);
    expect(thread).toMatch(/id="thread-mailbox">billing@acme\.example</);
  }, 30_000);

  it("authenticated mail from another served mailbox in a thread is the team's reply, not a customer's", async () => {
    const [supportBox] = h.runtime.mailboxes.map((m) => m.mailbox.id);
    const first = await h.runtime.db.message.findFirst({ where: { messageId: '<mb-support-1@customer.example>' } });
    const turnsBefore = await h.runtime.db.turn.count({ where: { threadId: first!.threadId! } });
    await dovecot.deliver(
      SUPPORT,
      customerEmail({
        from: `Acme Billing <${BILLING}>`,
        to: SUPPORT,
        cc: 'carla@customer.example',
        subject: 'Re: Where is my parcel?',
        body: 'Carla, billing here: the parcel was re-sent today.',
        messageId: '<mb-internal-1@acme.example>',
        inReplyTo: '<mb-support-1@customer.example>',
        references: '<mb-support-1@customer.example>',
        headers: { 'Authentication-Results': 'mx.acme.example; dkim=pass header.d=acme.example; dmarc=pass header.from=acme.example' },
      }),
    );
    const stored = await waitFor(
      () => h.runtime.db.message.findFirst({ where: { messageId: '<mb-internal-1@acme.example>' } }),
      (m) => m !== null,
      30_000,
      "billing's message stored in support's thread",
    ).then((m) => m!);
    expect(stored.mailboxId).toBe(supportBox);
    expect(stored.threadId).toBe(first!.threadId);
    expect(stored.author).toBe('staff');
    expect(await h.runtime.db.turn.count({ where: { threadId: first!.threadId! } })).toBe(turnsBefore);
  }, 60_000);
});
