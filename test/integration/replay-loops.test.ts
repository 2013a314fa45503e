/**
 * Loops stop in a replay too (the finding of issue 11: an auto-responder without RFC 3834 headers
 * got 48 replies in 50 h, one rotating its plus-address and ticket subject got 120 replies to 120
 * mails). Replayed with the default settings and the offline provider: the loop guard and the
 * virtual clock, nothing else.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerEmail } from '../support/agent-harness.ts';
import { replayFiles } from '../support/replay.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'replay-loops-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeMails(name: string, mails: string[]): Promise<string> {
  const folder = path.join(dir, name);
  await import('node:fs/promises').then((fs) => fs.mkdir(folder, { recursive: true }));
  await Promise.all(mails.map((raw, i) => writeFile(path.join(folder, `${String(i).padStart(3, '0')}.eml`), raw)));
  return folder;
}

const start = Date.UTC(2026, 10, 2, 8);

describe('loops stop in a replay', () => {
  it('an auto-responder without RFC 3834 headers, answering every hour for 50 hours, gets three replies', async () => {
    const mails = Array.from({ length: 50 }, (_, i) =>
      customerEmail({
        from: 'helpdesk@vendor-desk.example',
        subject: i === 0 ? 'We received your request' : 'Re: We received your request',
        body: `Thank you for contacting Vendor Desk. Your request ${5000 + i} has been logged and will be answered within 2 business days.`,
        date: new Date(start + i * 3_600_000),
        messageId: `<auto-${i}@vendor-desk.example>`,
      }),
    );
    const report = await replayFiles([await writeMails('hourly', mails)]);
    expect(report.messages.filter((m) => m.outcome === 'processed')).toHaveLength(50);
    expect(report.drafts).toHaveLength(3);
    expect(report.failures).toEqual([]);
  }, 180_000);

  it('one that rotates its plus-address and ticket subject (a new thread every time), 120 mails, gets three replies', async () => {
    const mails = Array.from({ length: 120 }, (_, i) =>
      customerEmail({
        from: `tickets+${7000 + i}@rotating-desk.example`,
        subject: `[Ticket #${7000 + i}] Your request has been received`,
        body: `Dear customer,\n\nYour ticket ${7000 + i} was created. An agent will reply within 24 hours.\n\nRotating Desk`,
        date: new Date(start + i * 600_000),
        messageId: `<rot-${i}@rotating-desk.example>`,
      }),
    );
    const report = await replayFiles([await writeMails('rotating', mails)]);
    expect(new Set(report.messages.map((m) => m.threadId)).size).toBe(120);
    expect(report.drafts).toHaveLength(3);
  }, 180_000);

  it('while a person at a free-mail address who writes something new each time keeps getting answers', async () => {
    const topics = [
      'export to Excel',
      'the invoice for March',
      'adding a colleague',
      'an API for reports',
      'opening hours',
      'single sign-on',
    ];
    const mails = topics.map((topic, i) =>
      customerEmail({
        from: 'busy.person@gmail.com',
        subject: `Question about ${topic}`,
        body: `Hello, could you tell me about ${topic}? Thanks.`,
        date: new Date(start + i * 7_200_000),
      }),
    );
    const report = await replayFiles([await writeMails('person', mails)]);
    expect(report.drafts).toHaveLength(6);
  }, 180_000);
});
