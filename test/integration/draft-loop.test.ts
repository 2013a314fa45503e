/**
 * The draft loop against a real Dovecot: what the team sent from its own client (the Sent folder)
 * settles the agent's drafts and counts as the team's reply; the Drafts folder follows the console
 * and newer turns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPoller } from '../../src/app/start-poller.ts';
import { discardDraft, editDraft } from '../../src/console/draft-actions.ts';
import type { MailboxPoller } from '../../src/imap/mailbox-poller.ts';
import { textSimilarity } from '../../src/memory/draft-outcome.ts';
import { formatQualityStats } from '../../src/cli/commands/stats-table.ts';
import { draftsToReview } from '../../src/store/draft-review.ts';
import { loadQualityStats } from '../../src/store/quality-stats.ts';
import { customerEmail, startAgentHarness, waitFor, type AgentHarness } from '../support/agent-harness.ts';
import { startDovecot, type DovecotServer } from '../support/dovecot.ts';

const SUPPORT = 'support@acme.example';
let dovecot: DovecotServer;
let h: AgentHarness;
let poller: MailboxPoller;

beforeAll(async () => {
  dovecot = await startDovecot();
  h = await startAgentHarness({
    REPLY_MODE: 'draft',
    LLM_PROVIDER: 'offline',
    IMAP_HOST: dovecot.host,
    IMAP_PORT: String(dovecot.imapPort),
    IMAP_SECURE: 'false',
    IMAP_USER: SUPPORT,
    IMAP_PASSWORD: 'support-pass',
    IMAP_POLL_INTERVAL: '1s',
    STAFF_ADDRESSES: 'bob@acme.example',
    TRUSTED_AUTHSERV_ID: 'mx.acme.example',
  });
  poller = startPoller(h.runtime);
}, 60_000);

afterAll(async () => {
  await poller?.stop();
  await h?.close();
  await dovecot?.destroy();
});

/** The draft answering a customer message, once its copy is in the Drafts folder. */
function appendedDraft(inReplyTo: string) {
  return waitFor(
    () => h.runtime.db.draft.findFirst({ where: { inReplyTo }, orderBy: { createdAt: 'desc' } }),
    (d) => d !== null && d.imapAppendedAt !== null,
    30_000,
    `the draft answering ${inReplyTo} to be in the Drafts folder`,
  ).then((d) => d!);
}

async function copiesInDrafts(messageId: string, attempt = 1): Promise<string[]> {
  let drafts: Awaited<ReturnType<DovecotServer['list']>>;
  try {
    drafts = await dovecot.list(SUPPORT, 'Drafts');
  } catch (error) {
    // The agent may expunge a copy between the listing's SEARCH and its FETCH: look again.
    if (attempt < 5 && error instanceof Error && /returned no source/.test(error.message)) return copiesInDrafts(messageId, attempt + 1);
    throw error;
  }
  // Unfolded: a long Message-ID is written on a continuation line.
  return drafts.map((d) => d.raw.toString('utf8').replace(/\r\n[ \t]+/g, ' ')).filter((raw) => raw.includes(`Message-ID: ${messageId}`));
}

/** What the person's client files in Sent: the support address writing to the customer. */
function sentMail(fields: { messageId: string; inReplyTo: string; to: string; subject: string; body: string }): string {
  return customerEmail({
    from: `Acme Support <${SUPPORT}>`,
    to: fields.to,
    subject: fields.subject,
    messageId: fields.messageId,
    inReplyTo: fields.inReplyTo,
    references: fields.inReplyTo,
    body: fields.body,
  });
}

async function customerWrites(n: string, extra: Partial<Parameters<typeof customerEmail>[0]> = {}): Promise<string> {
  const id = `<loop-${n}@customer.example>`;
  await dovecot.deliver(
    SUPPORT,
    customerEmail({
      from: `Carla ${n} <carla${n}@customer.example>`,
      subject: `Order ${n}`,
      body: `Where is my order ${n}?`,
      messageId: id,
      ...extra,
    }),
  );
  return id;
}

describe('the draft loop', () => {
  it('records a draft sent from the client with its Message-ID kept, but edited, as sent-edited with its similarity', async () => {
    const asked = await customerWrites('1');
    const draft = await appendedDraft(asked);
    const sentText = `${draft.body}\n\nI checked: your parcel left our warehouse yesterday.`;
    await dovecot.append(
      SUPPORT,
      'Sent',
      sentMail({ messageId: draft.messageId, inReplyTo: asked, to: 'carla1@customer.example', subject: draft.subject, body: sentText }),
      ['\\Seen'],
    );
    const settled = await waitFor(
      () => h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } }),
      (d) => d.outcome !== 'pending',
      30_000,
      'the draft to be settled from the Sent folder',
    );
    expect(settled.outcome).toBe('sent-edited');
    expect(settled.outcomeMatch).toBe('message-id');
    const message = await h.runtime.db.message.findFirstOrThrow({ where: { messageId: draft.messageId } });
    expect(message).toMatchObject({ direction: 'outbound', author: 'staff', threadId: draft.threadId });
    expect(settled.outcomeSimilarity).toBeCloseTo(textSimilarity(draft.body, message.extractedText), 3);
    expect(settled.outcomeSimilarity).toBeGreaterThan(0.3);
    expect(settled.outcomeSimilarity).toBeLessThan(0.97);
    // The client sent it: the agent does not keep it for review.
    expect((await draftsToReview(h.runtime.db, 100)).map((d) => d.id)).not.toContain(draft.id);
  });

  it('stores a reply sent under a new Message-ID as the team’s, settles the draft by In-Reply-To, and its promise becomes a commitment', async () => {
    const asked = await customerWrites('2');
    const draft = await appendedDraft(asked);
    const staffId = '<staff-2@mail.acme.example>';
    await dovecot.append(
      SUPPORT,
      'Sent',
      sentMail({
        messageId: staffId,
        inReplyTo: asked,
        to: 'carla2@customer.example',
        subject: draft.subject,
        // The promise leads: the buffer's share keeps the newest exchanges whole and cuts an older
        // one from its end, and this reply's Date may tie with the customer's mail to the second.
        body: `We will refund the shipping costs by Friday.\n\n${draft.body}`,
      }),
      ['\\Seen'],
    );
    const staff = await waitFor(
      () => h.runtime.db.message.findFirst({ where: { messageId: staffId } }),
      (m) => m !== null,
      30_000,
      'the staff reply to be stored',
    );
    expect(staff).toMatchObject({ direction: 'outbound', author: 'staff', threadId: draft.threadId, status: 'sent' });
    const settled = await waitFor(
      () => h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } }),
      (d) => d.outcome !== 'pending',
      30_000,
      'the draft to be settled',
    );
    expect(settled).toMatchObject({ outcome: 'sent-edited', outcomeMatch: 'in-reply-to', outcomeMessageId: staffId });

    const outcome = await h.runtime.pipeline().runPromotion(draft.threadId, 'operator');
    expect(outcome.kind).toBe('promoted');
    const commitments = await h.runtime.db.commitment.findMany({ where: { threadId: draft.threadId } });
    expect(commitments.map((c) => ({ text: c.text, source: c.sourceMessageId }))).toEqual([
      { text: 'We will refund the shipping costs by Friday', source: staffId },
    ]);

    // The customer answers the team's mail: the next turn's prompt carries the team's reply among the recent exchanges.
    const followUp = await customerWrites('2b', {
      from: 'Carla 2 <carla2@customer.example>',
      subject: `Re: ${draft.subject}`,
      inReplyTo: staffId,
      references: `${asked} ${staffId}`,
      body: 'Thanks, Friday works for me.',
    });
    const next = await appendedDraft(followUp);
    expect(next.threadId).toBe(draft.threadId);
    const turn = await h.runtime.db.turn.findUniqueOrThrow({ where: { id: next.turnId } });
    expect(turn.prompt).toContain('We will refund the shipping costs by Friday.');
  });

  it('stores mail from a staff address in the inbox with an aligned DMARC pass as the team’s reply, never answered', async () => {
    const asked = await customerWrites('3');
    const draft = await appendedDraft(asked);
    const staffId = '<bob-3@mail.acme.example>';
    await dovecot.deliver(
      SUPPORT,
      customerEmail({
        from: 'Bob <bob@acme.example>',
        to: 'carla3@customer.example',
        cc: SUPPORT,
        subject: 'Re: Order 3',
        messageId: staffId,
        inReplyTo: asked,
        body: 'Hi Carla, I am handling this one personally and will call you today.',
        headers: { 'Authentication-Results': 'mx.acme.example; dkim=pass header.d=acme.example; dmarc=pass header.from=acme.example' },
      }),
    );
    const staff = await waitFor(
      () => h.runtime.db.message.findFirst({ where: { messageId: staffId } }),
      (m) => m !== null,
      30_000,
      'the staff mail to be stored',
    );
    expect(staff).toMatchObject({ direction: 'outbound', author: 'staff', threadId: draft.threadId });
    const replaced = await waitFor(
      () => h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } }),
      (d) => d.outcome !== 'pending',
      30_000,
      'the draft to be settled',
    );
    expect(replaced).toMatchObject({ outcome: 'replaced', status: 'discarded' });
    // The replaced draft's copy leaves the Drafts folder.
    await waitFor(
      () => copiesInDrafts(draft.messageId),
      (c) => c.length === 0,
      30_000,
      'the replaced copy to be removed',
    );
    expect(await h.runtime.db.turn.count({ where: { threadId: draft.threadId } })).toBe(1);
  });

  it('replaces the Drafts copy when a draft is edited in the console, and removes it when discarded', async () => {
    const asked = await customerWrites('4');
    const draft = await appendedDraft(asked);
    expect(await copiesInDrafts(draft.messageId)).toHaveLength(1);
    expect(await editDraft(h.runtime, draft.id, 'Your order ships on Monday, tracking follows.')).toBe('done');
    const copies = await waitFor(
      () => copiesInDrafts(draft.messageId),
      (c) => c.length === 1 && c[0]!.includes('Your order ships on Monday'),
      30_000,
      'the edited copy in the Drafts folder',
    );
    expect(copies).toHaveLength(1);
    const edited = await h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } });
    expect(edited.imapAppendedAt).not.toBeNull();

    expect(await discardDraft(h.runtime, draft.id)).toBe('done');
    await waitFor(
      () => copiesInDrafts(draft.messageId),
      (c) => c.length === 0,
      30_000,
      'the discarded copy to be removed',
    );
    expect(await h.runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } })).toMatchObject({ outcome: 'discarded' });
  });

  it('finds a copy again by its Message-ID once the Drafts folder’s UIDVALIDITY changed', async () => {
    const asked = await customerWrites('6');
    const draft = await appendedDraft(asked);
    expect(draft.imapUid).not.toBeNull();
    const validity = await dovecot.changeUidValidity(SUPPORT, 'Drafts');
    expect(validity).not.toBe(draft.imapUidValidity);
    expect(await copiesInDrafts(draft.messageId)).toHaveLength(1);
    expect(await discardDraft(h.runtime, draft.id)).toBe('done');
    await waitFor(
      () => copiesInDrafts(draft.messageId),
      (c) => c.length === 0,
      30_000,
      'the renumbered copy to be removed',
    );
  });

  it('supersedes the first draft when a second turn drafts in the same thread, in the console and in the Drafts folder', async () => {
    const asked = await customerWrites('5');
    const first = await appendedDraft(asked);
    const followUp = await customerWrites('5b', {
      from: 'Carla 5 <carla5@customer.example>',
      subject: 'Re: Order 5',
      body: 'Also, can I change the delivery address?',
      inReplyTo: first.messageId,
      references: `${asked} ${first.messageId}`,
    });
    const second = await appendedDraft(followUp);
    expect(second.id).not.toBe(first.id);
    expect(await h.runtime.db.draft.findUniqueOrThrow({ where: { id: first.id } })).toMatchObject({
      outcome: 'superseded',
      status: 'discarded',
      outcomeMessageId: second.messageId,
    });
    const review = (await draftsToReview(h.runtime.db, 100)).filter((d) => d.thread.id === first.threadId);
    expect(review.map((d) => d.id)).toEqual([second.id]);
    await waitFor(
      () => copiesInDrafts(first.messageId),
      (c) => c.length === 0,
      30_000,
      'the superseded copy to be removed',
    );
    expect(await copiesInDrafts(second.messageId)).toHaveLength(1);
  });

  it('counts a superseded draft that a person sent all the same as sent, and the newer one as replaced', async () => {
    const first = await h.runtime.db.draft.findFirstOrThrow({ where: { inReplyTo: '<loop-5@customer.example>' } });
    const second = await h.runtime.db.draft.findFirstOrThrow({ where: { inReplyTo: '<loop-5b@customer.example>' } });
    await dovecot.append(
      SUPPORT,
      'Sent',
      sentMail({
        messageId: first.messageId,
        inReplyTo: '<loop-5@customer.example>',
        to: 'carla5@customer.example',
        subject: first.subject,
        body: first.body,
      }),
      ['\\Seen'],
    );
    const sent = await waitFor(
      () => h.runtime.db.draft.findUniqueOrThrow({ where: { id: first.id } }),
      (d) => d.outcome !== 'superseded',
      30_000,
      'the superseded draft to be recorded as sent',
    );
    expect(sent).toMatchObject({ outcome: 'sent-as-is', outcomeSimilarity: 1, outcomeMatch: 'message-id', status: 'sent' });
    expect(await h.runtime.db.draft.findUniqueOrThrow({ where: { id: second.id } })).toMatchObject({
      outcome: 'replaced',
      status: 'discarded',
    });
    expect(await h.runtime.db.message.findFirstOrThrow({ where: { messageId: first.messageId } })).toMatchObject({
      author: 'staff',
      status: 'sent',
    });
  });

  it('sums the outcomes up in the quality figures', async () => {
    const stats = await loadQualityStats(h.runtime.db, new Date(Date.now() - 3_600_000));
    // The answer to Carla's follow-up (the team's reply in the buffer) still waits for a person.
    expect(stats.byOutcome).toEqual({ pending: 1, 'sent-as-is': 1, 'sent-edited': 2, replaced: 2, discarded: 2, superseded: 0 });
    expect(stats.drafts).toBe(8);
    // One of the seven drafts a person decided on went out as drafted.
    expect(stats.approvalAsIsRate).toBe(0.143);
    const edited = await h.runtime.db.draft.findMany({ where: { outcome: 'sent-edited' }, select: { outcomeSimilarity: true } });
    const mean = edited.reduce((sum, d) => sum + d.outcomeSimilarity!, 0) / edited.length;
    expect(stats.meanEditedSimilarity).toBeCloseTo(mean, 3);
    expect(stats.needsHumanRate).toBe(0);
    expect(stats.medianSecondsToDraft).not.toBeNull();
    expect(stats.perIntent.reduce((sum, i) => sum + i.drafts, 0)).toBe(8);
    expect(formatQualityStats(stats)).toMatch(/^all\s+8\s+1\s+2\s+2\s+2\s+0\s+1\s+14\.3%/m);
  });
});

describe('the Sent folder joins only its own customer’s thread (finding 3)', () => {
  /** Appends to Sent, then a marker after it: once the marker is stored, the poller has read the first one. */
  async function appendThenMarker(raw: string, markerTo: { asked: string; to: string; subject: string }): Promise<void> {
    await dovecot.append(SUPPORT, 'Sent', raw, ['\\Seen']);
    const markerId = `<marker-${Math.random().toString(36).slice(2)}@mail.acme.example>`;
    await dovecot.append(
      SUPPORT,
      'Sent',
      sentMail({ messageId: markerId, inReplyTo: markerTo.asked, to: markerTo.to, subject: markerTo.subject, body: 'Marker.' }),
      ['\\Seen'],
    );
    await waitFor(
      () => h.runtime.db.message.findFirst({ where: { messageId: markerId } }),
      (m) => m !== null,
      30_000,
      'the marker to be stored',
    );
  }

  it('files a reply to customer B carrying In-Reply-To of A’s mail in B’s own thread, and A’s next prompt never sees it', async () => {
    const askedA = await customerWrites('16');
    const draftA = await appendedDraft(askedA);
    const askedB = await customerWrites('17', {
      from: 'Dora <dora17@customer.example>',
      subject: 'Order 17',
      body: 'I forgot my password.',
    });
    const draftB = await appendedDraft(askedB);
    expect(draftB.threadId).not.toBe(draftA.threadId);
    const toB = '<staff-17@mail.acme.example>';
    await dovecot.append(
      SUPPORT,
      'Sent',
      sentMail({
        messageId: toB,
        inReplyTo: askedA,
        to: 'dora17@customer.example',
        subject: 'Re: Order 17',
        body: 'Dora, your reset link is https://acme.example/reset/SECRET-DORA-17 and your IBAN on file ends 3000.',
      }),
      ['\\Seen'],
    );
    const stored = await waitFor(
      () => h.runtime.db.message.findFirst({ where: { messageId: toB } }),
      (m) => m !== null,
      30_000,
      'the reply to B to be stored',
    );
    expect(stored).toMatchObject({ threadId: draftB.threadId, direction: 'outbound', author: 'staff' });
    // B's draft was answered by B's mail; A's was not.
    await waitFor(
      () => h.runtime.db.draft.findUniqueOrThrow({ where: { id: draftB.id } }),
      (d) => d.outcome !== 'pending',
      30_000,
      'B’s draft to be settled by the reply to B',
    );
    expect(await h.runtime.db.draft.findUniqueOrThrow({ where: { id: draftA.id } })).toMatchObject({ outcome: 'pending' });

    const followA = await customerWrites('16b', {
      from: 'Carla 16 <carla16@customer.example>',
      subject: 'Re: Order 16',
      inReplyTo: askedA,
      body: 'Any news on my order?',
    });
    const nextA = await appendedDraft(followA);
    expect(nextA.threadId).toBe(draftA.threadId);
    const turn = await h.runtime.db.turn.findUniqueOrThrow({ where: { id: nextA.turnId } });
    expect(turn.prompt).toContain('Any news on my order?');
    expect(turn.prompt).not.toContain('SECRET-DORA-17');
  });

  it('stores nothing for a reply to someone with no thread of their own that carries A’s In-Reply-To', async () => {
    const askedA = await customerWrites('18');
    const draftA = await appendedDraft(askedA);
    const stray = '<staff-18-stray@mail.acme.example>';
    await appendThenMarker(
      sentMail({
        messageId: stray,
        inReplyTo: askedA,
        to: 'zed@elsewhere.example',
        subject: 'Re: Order 18',
        body: 'Zed, your code is 4711.',
      }),
      { asked: askedA, to: 'carla18@customer.example', subject: 'Re: Order 18' },
    );
    expect(await h.runtime.db.message.count({ where: { messageId: stray } })).toBe(0);
    expect(await h.runtime.db.message.count({ where: { threadId: draftA.threadId, extractedText: { contains: '4711' } } })).toBe(0);
  });

  it('does not take a customer’s own mail found in Sent (a forward, a BCC copy) for the team’s', async () => {
    const askedA = await customerWrites('19');
    const draftA = await appendedDraft(askedA);
    const forward = '<carla19-forward@customer.example>';
    await appendThenMarker(
      customerEmail({
        from: 'Carla 19 <carla19@customer.example>',
        to: 'friend@customer.example',
        headers: { Bcc: SUPPORT },
        subject: 'Fwd: Order 19',
        messageId: forward,
        inReplyTo: askedA,
        body: 'Support already promised me a full refund and lifetime premium.',
      }),
      { asked: askedA, to: 'carla19@customer.example', subject: 'Re: Order 19' },
    );
    expect(await h.runtime.db.message.count({ where: { messageId: forward } })).toBe(0);
    expect(await h.runtime.db.message.count({ where: { author: 'staff', extractedText: { contains: 'lifetime premium' } } })).toBe(0);
    // The draft was settled by the team's own reply (the marker), never by the forward.
    expect((await h.runtime.db.draft.findUniqueOrThrow({ where: { id: draftA.id } })).outcomeMessageId).not.toBe(forward);
  });
});
