import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { detectLanguage } from '../../src/llm/offline-text.ts';
import type { ReplayReport } from '../../src/replay/replay-report.ts';
import { replayFiles } from '../support/replay.ts';

const CORPUS = path.resolve(import.meta.dirname, '../../fixtures/emails/corpus');

const expectedSchema = z.object({
  supportAddress: z.string(),
  messages: z.record(
    z.string(),
    z.object({
      outcome: z.enum(['processed', 'skipped']),
      skipReason: z.string().nullable(),
      entity: z.string().nullable(),
      thread: z.string().nullable(),
      newText: z.string().nullable(),
    }),
  ),
});

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('the realistic fixture corpus', () => {
  let expected: z.infer<typeof expectedSchema>;
  let report: ReplayReport;
  let byFile: Map<string, ReplayReport['messages'][number]>;
  let addressOf: Map<string, string>;

  beforeAll(async () => {
    expected = expectedSchema.parse(JSON.parse(await readFile(path.join(CORPUS, 'expected.json'), 'utf8')));
    report = await replayFiles([CORPUS], { address: expected.supportAddress });
    byFile = new Map(report.messages.map((m) => [m.file, m]));
    addressOf = new Map(report.profiles.map((p) => [p.entityId, p.addresses.join(',')]));
  }, 120_000);

  it('replays every file exactly once', () => {
    expect([...byFile.keys()].sort()).toEqual(Object.keys(expected.messages).sort());
  });

  it('classifies every message as expected (processed, or skipped with the right reason)', () => {
    const actual = Object.fromEntries([...byFile].map(([file, m]) => [file, `${m.outcome}:${m.skipReason}`]));
    const wanted = Object.fromEntries(Object.entries(expected.messages).map(([file, e]) => [file, `${e.outcome}:${e.skipReason}`]));
    expect(actual).toEqual(wanted);
  });

  it('resolves every customer message to the entity of its sender', () => {
    const actual = Object.fromEntries(
      Object.entries(expected.messages)
        .filter(([, e]) => e.entity !== null)
        .map(([file]) => [file, addressOf.get(byFile.get(file)?.entityId ?? '') ?? null]),
    );
    const wanted = Object.fromEntries(
      Object.entries(expected.messages)
        .filter(([, e]) => e.entity !== null)
        .map(([file, e]) => [file, e.entity]),
    );
    expect(actual).toEqual(wanted);
  });

  it('groups messages into exactly the expected threads', () => {
    const threadOfLabel = new Map<string, string>();
    const labelOfThread = new Map<string, string>();
    const problems: string[] = [];
    for (const [file, e] of Object.entries(expected.messages)) {
      if (e.thread === null) continue;
      const threadId = byFile.get(file)?.threadId ?? null;
      if (!threadId) {
        problems.push(`${file}: no thread`);
        continue;
      }
      const known = threadOfLabel.get(e.thread);
      if (known && known !== threadId) problems.push(`${file}: expected in thread "${e.thread}" with its other messages`);
      threadOfLabel.set(e.thread, known ?? threadId);
      const label = labelOfThread.get(threadId);
      if (label && label !== e.thread) problems.push(`${file}: merged thread "${e.thread}" into "${label}"`);
      labelOfThread.set(threadId, label ?? e.thread);
    }
    expect(problems).toEqual([]);
  });

  it('extracts only the new text of every processed message', () => {
    const mismatches = Object.entries(expected.messages)
      .filter(([, e]) => e.newText !== null)
      .map(([file, e]) => ({ file, expected: collapse(e.newText ?? ''), actual: collapse(byFile.get(file)?.text ?? '') }))
      .filter((m) => m.expected !== m.actual);
    expect(mismatches).toEqual([]);
  });

  // What `npm run demo` shows (the same corpus through the offline provider).
  const SALUTATION =
    /^(dear|hi|hello|hey|good (morning|afternoon|evening)|hallo|guten (tag|morgen)|sehr geehrte|liebe|bonjour|salut|madame|monsieur|hola|buen[oa]s|estimad|beste|geachte|hej|buongiorno|olá|здравствуйте|добрый|いつも|お世話|拝啓|您好|你好|thanks|thank you|best regards|regards|cheers|mit freundlichen|cordialement|saludos)\b/i;

  it('demo: no open item and no listed item of a draft is a greeting or a sign-off', () => {
    const items = report.threads.flatMap((t) => t.openItems);
    expect(items.length).toBeGreaterThan(10);
    for (const item of items) expect(item.trim()).not.toMatch(SALUTATION);
    for (const draft of report.drafts) {
      for (const line of draft.body.split('\n').filter((l) => l.startsWith('- '))) expect(line.slice(2).trim()).not.toMatch(SALUTATION);
    }
  });

  it('demo: threads the customer declared settled are resolved with a closing reply and no stale list', () => {
    // "That worked", "the new link worked", "問題ございません", "这个问题可以关闭了", "le colis est bien arrivé".
    for (const file of [
      '009-outlook-android-changed-subject-footer.eml',
      '011-yahoo-android-reply-yahoo-quoted.eml',
      '034-iso2022jp-reply-quoted.eml',
      '039-outlook-zh-headerless-dafu-huifu.eml',
      '022-iphone-fr-envoye-de-mon-iphone.eml',
    ]) {
      const threadId = byFile.get(file)!.threadId;
      const thread = report.threads.find((t) => t.threadId === threadId)!;
      expect([file, thread.status]).toEqual([file, 'resolved']);
      expect(thread.openItems).toEqual([]);
      const last = report.drafts.filter((d) => d.threadId === threadId).at(-1)!;
      expect(last.body.split('\n').some((l) => l.startsWith('- '))).toBe(false);
    }
  });

  it('demo: every draft answers in the language of the email it answers', () => {
    const byMessageId = new Map(report.messages.map((m) => [m.messageId, m]));
    const languages = new Set<string>();
    for (const draft of report.drafts) {
      const answered = byMessageId.get(draft.headers['In-Reply-To'] ?? '');
      if (!answered?.text) continue;
      const language = detectLanguage(answered.text);
      languages.add(language);
      expect([draft.subject, detectLanguage(draft.body)]).toEqual([draft.subject, language]);
    }
    expect([...languages].sort()).toEqual(expect.arrayContaining(['de', 'en', 'es', 'fr', 'ja', 'nl', 'ru', 'zh']));
  });

  it('drafts one reply per customer turn and none for skipped mail', () => {
    const skippedThreads = new Set(report.messages.filter((m) => m.outcome === 'skipped').map((m) => m.threadId));
    expect(report.drafts.length).toBeGreaterThan(0);
    for (const draft of report.drafts) {
      expect(draft.headers['Message-ID']).toMatch(/^<sa\.[^@]+@acme\.example>$/);
      expect(draft.subject).toMatch(/^Re: /);
    }
    const draftedThreads = new Set(report.drafts.map((d) => d.threadId));
    for (const thread of report.threads) expect(draftedThreads.has(thread.threadId)).toBe(true);
    expect(skippedThreads.size).toBeGreaterThan(0);
  });
});
