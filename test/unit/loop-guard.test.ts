import { describe, expect, it } from 'vitest';
import {
  freshLoopState,
  loopScopes,
  loopStop,
  looksHuman,
  markStopped,
  observeInbound,
  observeReply,
  similarity,
  sketch,
  type LoopState,
} from '../../src/memory/loop-guard.ts';

const limits = { maxConsecutive: 3, windowMs: 7 * 86_400_000 };
const t0 = new Date('2026-11-01T10:00:00Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);

/** Plays a conversation in one scope: inbound texts and agent replies; the state after it. */
function play(events: Array<['in', string] | ['out', string]>): LoopState {
  let state = freshLoopState('mb|address:x@y.example', t0);
  events.forEach(([kind, text], i) => {
    state = kind === 'in' ? observeInbound(state, [text], at(i), limits) : observeReply(state, text, at(i));
  });
  return state;
}

describe('sketch and similarity', () => {
  it('treats texts that differ only in numbers, case and punctuation as the same template', () => {
    const pairs = [
      ['Thank you, your ticket #1 is open.', 'THANK YOU -- your ticket #98231 is open!'],
      [
        'Ihre Anfrage 4711 ist eingegangen. Wir melden uns innerhalb von 24 Stunden.',
        'Ihre Anfrage 4712 ist eingegangen. Wir melden uns innerhalb von 48 Stunden.',
      ],
      [
        'お問い合わせ番号 12345 を受け付けました。担当者より2営業日以内にご連絡いたします。',
        'お問い合わせ番号 99871 を受け付けました。担当者より3営業日以内にご連絡いたします。',
      ],
      ['您的工单 5521 已创建，我们会尽快回复。', '您的工单 6630 已创建，我们会尽快回复。'],
      ['Ваша заявка №77 принята. Ответим в течение суток.', 'Ваша заявка №78 принята. Ответим в течение суток.'],
      ['Nous avons bien reçu votre message (réf. 2026-11-30).', 'Nous avons bien reçu votre message (réf. 2026-12-01).'],
    ];
    for (const [a, b] of pairs) expect(similarity(sketch(a!), sketch(b!)), `${a} ~ ${b}`).toBeGreaterThanOrEqual(0.8);
  });

  it('tells different messages apart, in several scripts', () => {
    const pairs = [
      ['How do I export my data to Excel?', 'Where can I find the invoice for March?'],
      ['Mein Passwort funktioniert nicht mehr.', 'Können Sie mir die Rechnung noch einmal schicken?'],
      ['パスワードを忘れました。', '請求書を再送してください。'],
      ['Thanks!', 'The export still fails with error 502 when I select more than one project.'],
    ];
    for (const [a, b] of pairs) expect(similarity(sketch(a!), sketch(b!)), `${a} vs ${b}`).toBeLessThan(0.5);
  });

  it('keeps a sketch bounded whatever the text length, and empty for text without letters', () => {
    expect(sketch('word '.repeat(100_000)).length).toBeLessThanOrEqual(128);
    expect(sketch('a\u0301'.repeat(150_000)).length).toBeLessThanOrEqual(128);
    expect(sketch('   ...  !!! ---')).toEqual([]);
    expect(sketch('')).toEqual([]);
  });
});

describe('the loop guard', () => {
  it('stops after three replies to a template that only changes its ticket number', () => {
    const state = play([
      ['in', 'Thank you, your ticket #1 is open.'],
      ['out', 'Hello, thanks for writing.'],
      ['in', 'Thank you, your ticket #2 is open.'],
      ['out', 'Hello, thanks for writing.'],
      ['in', 'Thank you, your ticket #3 is open.'],
      ['out', 'Hello, thanks for writing.'],
      ['in', 'Thank you, your ticket #4 is open.'],
    ]);
    expect(state.consecutive).toBe(3);
    const stop = loopStop([state], limits);
    expect(stop?.reason).toMatch(/3 replies in a row to this address/);
    expect(stop?.firstStop).toBe(true);
    expect(loopStop(markStopped([state], limits, at(9)), limits)?.firstStop).toBe(false);
  });

  it('never stops a person who writes something new each time', () => {
    const state = play([
      ['in', 'How do I export my data?'],
      ['out', 'Use the export button.'],
      ['in', 'Where is the invoice for March?'],
      ['out', 'In Billing.'],
      ['in', 'Can I add a colleague?'],
      ['out', 'Yes, under Team.'],
      ['in', 'Is there an API for reports?'],
    ]);
    expect(state.consecutive).toBe(0);
    expect(loopStop([state], limits)).toBeNull();
  });

  it('counts an echo of our own reply as not human', () => {
    const reply = 'Hello, thank you for asking about exports. Our guide explains every step in detail.';
    const state = observeReply(freshLoopState('s', t0), reply, t0);
    expect(looksHuman(state, sketch(`Received: ${reply}`))).toBe(false);
    expect(looksHuman(state, sketch('That guide did not help, the button is grey.'))).toBe(true);
  });

  it('counts an empty (quote-only) message as not human', () => {
    expect(looksHuman(freshLoopState('s', t0), sketch(''))).toBe(false);
  });

  it('resets when a human-looking message arrives after the stop', () => {
    let state = play([
      ['in', 'Auto: received.'],
      ['out', 'Hi.'],
      ['in', 'Auto: received.'],
      ['out', 'Hi.'],
      ['in', 'Auto: received.'],
      ['out', 'Hi.'],
    ]);
    expect(state.consecutive).toBe(3);
    state = observeInbound(state, ['Sorry, that was our robot. My real question: how do I reset the password?'], at(20), limits);
    expect(state.consecutive).toBe(0);
  });

  it('starts afresh after the window has passed', () => {
    const state = play([
      ['in', 'Auto: received.'],
      ['out', 'Hi.'],
      ['in', 'Auto: received.'],
      ['out', 'Hi.'],
      ['in', 'Auto: received.'],
      ['out', 'Hi.'],
    ]);
    const later = observeInbound(state, ['Auto: received.'], new Date(t0.getTime() + 8 * 86_400_000), limits);
    expect(later.consecutive).toBe(0);
  });

  it('keeps at most eight fingerprints', () => {
    let state = freshLoopState('s', t0);
    for (let i = 0; i < 30; i++)
      state = observeInbound(
        state,
        [`distinct message about topic ${'abcdefghijklmnopqrstuvwxyz'[i % 26]!.repeat(5)} number ${i}`],
        at(i),
        limits,
      );
    expect(state.fingerprints.length).toBe(8);
  });
});

describe('loop scopes', () => {
  const free = (d: string) => d === 'gmail.com';
  it('folds plus-tags, and counts a company domain but never a free-mail domain', () => {
    expect(loopScopes({ mailboxId: 'mb', threadId: 't1', recipients: ['bot+123@vendor.example'], isFreeMailDomain: free })).toEqual([
      'mb|thread:t1',
      'mb|address:bot@vendor.example',
      'mb|domain:vendor.example',
    ]);
    expect(loopScopes({ mailboxId: 'mb', threadId: 't2', recipients: ['ann+x@gmail.com'], isFreeMailDomain: free })).toEqual([
      'mb|thread:t2',
      'mb|address:ann@gmail.com',
    ]);
  });
});
