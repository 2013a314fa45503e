import { describe, expect, it } from 'vitest';
import { renderReply } from '../../src/mail/reply-render.ts';
import { extractReplyText } from '../../src/mail/reply-text.ts';
import { settleDrafts, textSimilarity, type PendingDraft } from '../../src/memory/draft-outcome.ts';

describe('text similarity', () => {
  it.each([
    ['the same words in the same order', 'a b c', 'a b c', 1],
    // pairs {a b, b c} and {a b, b d}: one shared of four -> 2·1/4
    ['one changed word at the end', 'a b c', 'a b d', 0.5],
    // pairs {we will, will call} and {we will, will call, call you}: 2·2/5
    ['words added', 'We will call.', 'we will call you', 0.8],
    ['case, accents and punctuation do not count', 'Hello, Wörld!', 'hello world', 1],
    ['nothing shared', 'refund approved', 'parcel lost', 0],
    ['two empty texts', '', '', 1],
    ['one empty text', '', 'hello there', 0],
    ['one word each', 'yes', 'yes', 1],
  ])('%s', (_name, a, b, expected) => {
    expect(textSimilarity(a, b)).toBeCloseTo(expected, 10);
    expect(textSimilarity(b, a)).toBeCloseTo(expected, 10);
  });

  it('compares only the first part of very long texts', () => {
    const head = 'word '.repeat(2000);
    expect(textSimilarity(`${head}tail one`, `${head}something else entirely`)).toBe(1);
  });
});

const at = (minute: number) => new Date(Date.UTC(2026, 11, 1, 10, minute));
const draft = (id: string, body: string, minute: number, inReplyTo = '<c1@x>'): PendingDraft => ({
  id,
  messageId: `<${id}@acme>`,
  inReplyTo,
  body,
  createdAt: at(minute),
});

describe('settling drafts from what the team sent', () => {
  it('a reply with the draft’s Message-ID is that draft, sent as is or edited', () => {
    const d = draft('d1', 'a b c', 0);
    expect(settleDrafts({ messageId: '<d1@acme>', inReplyTo: '<c1@x>', text: 'a b c', sentAt: at(5) }, [d])).toEqual([
      { draftId: 'd1', outcome: 'sent-as-is', similarity: 1, match: 'message-id' },
    ]);
    expect(settleDrafts({ messageId: '<d1@acme>', inReplyTo: '<c1@x>', text: 'a b d', sentAt: at(5) }, [d])).toEqual([
      { draftId: 'd1', outcome: 'sent-edited', similarity: 0.5, match: 'message-id' },
    ]);
  });

  it('without it, the closest draft answering the same message is the one sent; the others were replaced', () => {
    const settled = settleDrafts({ messageId: '<new@client>', inReplyTo: '<c1@x>', text: 'we will call you', sentAt: at(30) }, [
      draft('far', 'refund approved today', 0),
      draft('near', 'We will call.', 10),
      draft('later', 'we will call you', 45),
    ]);
    expect(settled).toEqual([
      { draftId: 'far', outcome: 'replaced', similarity: null, match: null },
      { draftId: 'near', outcome: 'sent-edited', similarity: 0.8, match: 'in-reply-to' },
    ]);
  });

  it('a reply to another message, or too different, replaces the drafts', () => {
    expect(
      settleDrafts({ messageId: '<new@client>', inReplyTo: '<c2@x>', text: 'a b c', sentAt: at(30) }, [draft('d1', 'a b c', 0)]),
    ).toEqual([{ draftId: 'd1', outcome: 'replaced', similarity: null, match: null }]);
    expect(
      settleDrafts({ messageId: '<new@client>', inReplyTo: '<c1@x>', text: 'parcel lost', sentAt: at(30) }, [
        draft('d1', 'refund approved', 0),
      ]),
    ).toEqual([{ draftId: 'd1', outcome: 'replaced', similarity: null, match: null }]);
  });
});

describe('similarity of a Markdown draft to what a mail client sent', () => {
  it('counts a draft sent as-is as the same text, whichever part the sent copy was read from', () => {
    const body =
      'Hello Alice,\n\nTo export:\n\n1. open **Settings**\n2. choose *Export*\n\nSee [the guide](https://acme.example/guide).\n\nBest,\nAcme';
    const sent = renderReply({
      body,
      signature: 'Acme Support',
      quote: { date: new Date(), fromName: 'Alice', fromAddress: 'alice@x.example', text: 'How do I export?' },
    });
    expect(textSimilarity(extractReplyText({ text: sent.text, html: sent.html }), body)).toBe(1);
    expect(textSimilarity(extractReplyText({ text: sent.text, html: null }), body)).toBe(1);
  });
});
