import { describe, expect, it } from 'vitest';
import { OfflineProvider } from '../../src/llm/offline-provider.ts';
import type { PromotionRequest, TurnRequest } from '../../src/llm/provider.ts';
import { offlineReply } from '../../src/llm/offline-text.ts';

const provider = new OfflineProvider();
const thread = { subject: 'Invoice #4471', summary: '', openItems: [], currentIntent: '', tags: [], pinnedItems: [], status: 'open' };

function turn(text: string, overrides: Partial<TurnRequest> = {}): TurnRequest {
  return {
    prompt: { system: 's', user: 'u' },
    thread,
    profile: null,
    emails: [
      { messageId: '<m@x>', fromName: 'Alice Okafor', fromAddress: 'alice@example.com', date: new Date('2026-11-02T09:00:00Z'), text },
    ],
    supportName: 'Acme Support',
    summaryTokenCap: 100,
    ...overrides,
  };
}

describe('the offline provider (rules, not a model)', () => {
  it('acknowledges, restates the requests as open items, and is deterministic', async () => {
    const text = 'Hi, invoice #4471 charged me twice. Could you check it? Please only call me in the evenings.';
    const a = await provider.messageTurn(turn(text));
    const b = await provider.messageTurn(turn(text));
    expect(a).toEqual(b);
    if (!a.ok) throw new Error('offline provider failed');
    expect(a.value.openItems).toEqual(['Could you check it?']);
    expect(a.value.reply.body).toMatch(/^Hello Alice,/);
    expect(a.value.reply.body).toContain('- Could you check it?');
    expect(a.value.currentIntent).toBe('billing_question');
    expect(a.value.reply.needsHuman).toBe(false);
  });

  it('flags refunds and legal threats for a human, and recognises a resolved thread', async () => {
    const refund = await provider.messageTurn(turn('I want a refund or I will contact my lawyer.'));
    expect(refund.ok && refund.value.reply.needsHuman).toBe(true);
    const done = await provider.messageTurn(turn('Thanks, that fixed it!'));
    expect(done.ok && done.value.resolved).toBe(true);
  });

  it('never quotes a salutation or a sign-off as an open item or in the summary', async () => {
    const text =
      'Dear Acme Support,\n\nOur invoice #5120 shows the wrong VAT number. Could you send a corrected copy?\n\nBest regards,\nAlice Okafor\nFinance, Globex';
    const a = await provider.messageTurn(turn(text));
    if (!a.ok) throw new Error('offline provider failed');
    expect(a.value.openItems).toEqual(['Could you send a corrected copy?']);
    expect(a.value.summary).not.toMatch(/Dear|regards/i);
    expect(a.value.summary).toContain('Our invoice #5120 shows the wrong VAT number.');
    const ja = await provider.messageTurn(
      turn(
        'Acme サポート御中\nいつもお世話になっております。\n請求書 INV-7781 の宛名を変更していただけますか？\nよろしくお願いいたします。',
      ),
    );
    if (!ja.ok) throw new Error('offline provider failed');
    expect(ja.value.openItems).toEqual(['請求書 INV-7781 の宛名を変更していただけますか？']);
    expect(ja.value.summary).not.toMatch(/御中|お世話|よろしく/);
  });

  it.each([
    ['en', 'Thanks, that worked! You can close this.', /glad it is sorted/],
    ['de', 'Danke, das hat funktioniert. Sie können das Ticket schließen.', /Schön, dass es jetzt klappt/],
    ['fr', 'Merci, ça a marché ! Vous pouvez fermer la demande.', /ravis que ce soit réglé/],
    ['es', 'Gracias, ya funciona. Pueden cerrar la solicitud.', /Nos alegra que esté resuelto/],
    ['nl', 'Bedankt, het werkt nu. U kunt dit sluiten.', /Fijn dat het is opgelost/],
    ['ja', '解決しました。ありがとうございました。', /解決したとのこと/],
    ['zh', '问题已解决，可以关闭了。谢谢！', /很高兴问题已经解决/],
    ['ru', 'Спасибо, всё заработало. Можно закрыть обращение.', /Рады, что всё решилось/],
  ])('closes a thread the customer declares settled (%s) with a short reply and no stale list', async (_language, text, closing) => {
    const open = { ...thread, openItems: ['Could you check it?'] };
    const done = await provider.messageTurn(turn(text, { thread: open }));
    if (!done.ok) throw new Error('offline provider failed');
    expect(done.value.resolved).toBe(true);
    expect(done.value.openItems).toEqual([]);
    expect(done.value.reply.body).toMatch(closing);
    expect(done.value.reply.body).not.toContain('Could you check it?');
  });

  it('does not close a thread on a negated "that worked", nor one that asks for more', async () => {
    const outcome = await provider.messageTurn(turn('Unfortunately that did not work, it still crashes. Could you check again?'));
    expect(outcome.ok && outcome.value.resolved).toBe(false);
    const de = await provider.messageTurn(turn('Leider funktioniert es jetzt immer noch nicht.'));
    expect(de.ok && de.value.resolved).toBe(false);
    // Settled, but with a new request: still open.
    const more = await provider.messageTurn(turn('That worked for now, thanks. Could you let us know when the fix is deployed?'));
    expect(more.ok && more.value.resolved).toBe(false);
  });

  it.each([
    ['de', 'Guten Tag,\nmeine Bestellung ist noch nicht angekommen. Können Sie bitte nachsehen?', /^Hallo Alice,\n\nvielen Dank/],
    ['fr', 'Bonjour,\nma commande n’est pas arrivée. Pourriez-vous vérifier ?', /^Bonjour Alice,\n\nMerci pour votre message/],
    ['es', 'Hola,\nmi pedido no ha llegado todavía. ¿Pueden revisarlo por favor?', /^Hola Alice:\n\nGracias por su mensaje/],
    ['ja', 'お世話になっております。\n注文がまだ届いておりません。確認していただけますか？', /お問い合わせいただきありがとうございます/],
  ])('answers in the customer’s language (%s)', async (_language, text, expected) => {
    const outcome = await provider.messageTurn(turn(text));
    if (!outcome.ok) throw new Error('offline provider failed');
    expect(outcome.value.reply.body).toMatch(expected);
  });

  it('pins the identifiers it recognises, not the sender’s own address, and not what is already pinned', async () => {
    const text =
      'Order ORD-88213 (invoice #5120) fails with ERR_SSL_PROTOCOL and 0x80070005. Write to ops@globex.example or see https://status.globex.example/incident/77. Sent by alice@example.com.';
    const outcome = await provider.messageTurn(turn(text, { thread: { ...thread, pinnedItems: ['#5120'] } }));
    if (!outcome.ok) throw new Error('offline provider failed');
    expect(outcome.value.pin).toEqual([
      'ORD-88213',
      'ERR_SSL_PROTOCOL',
      '0x80070005',
      'ops@globex.example',
      'https://status.globex.example/incident/77',
    ]);
  });

  it('reads hostile input in linear time', async () => {
    const hostile = `${'a'.repeat(50_000)}@${'b-'.repeat(20_000)} ${'Dear '.repeat(5_000)} ${'#1'.repeat(10_000)}`;
    const outcome = await provider.messageTurn(turn(hostile));
    expect(outcome.ok).toBe(true);
  });

  it('proposes facts only from explicit phrases, quoting them literally', async () => {
    const request: PromotionRequest = {
      prompt: { system: 's', user: 'u' },
      thread,
      messages: [
        {
          messageId: '<m1@x>',
          date: new Date('2026-11-02T09:00:00Z'),
          text: 'My name is Alice Okafor. Please only call me in the evenings. I am so frustrated!',
        },
      ],
      replies: [
        {
          messageId: '<r1@x>',
          date: new Date('2026-11-02T10:00:00Z'),
          text: "We'll refund the duplicate charge by Friday.",
          author: 'agent',
        },
      ],
      commitments: [],
    };
    const outcome = await provider.threadPromotion(request);
    if (!outcome.ok) throw new Error('offline provider failed');
    expect(outcome.value.facts.map((f) => [f.key, f.value, f.category])).toEqual([
      ['preferred_contact_time', 'evenings', 'preference'],
      ['name', 'Alice Okafor', 'identity'],
      ['sentiment', 'i am so frustrated', 'sentiment'],
    ]);
    for (const fact of outcome.value.facts) expect(request.messages[0]!.text).toContain(fact.evidence);
    expect(outcome.value.commitments).toEqual([
      { text: "We'll refund the duplicate charge by Friday", due: 'by Friday', sourceMessageId: '<r1@x>' },
    ]);
  });

  it.each([
    ['I work for Northwind Traders.\n\nBest regards,\nPriya', 'company', 'Northwind Traders'],
    ['I work at Acme Widgets\nSent from my phone', 'company', 'Acme Widgets'],
    ['I work for Globex, and we use the Pro plan.', 'company', 'Globex'],
    [
      'I am troubleshooting sync failures with error E-1042 since this morning on all Windows laptops.',
      'current_issue',
      'sync failures with error E-1042 since this morning on all',
    ],
    ["I'm dealing with a login loop.", 'current_issue', 'a login loop'],
    ['From now on, please call me in the mornings instead.', 'preferred_contact_time', 'mornings'],
    ['Our workspace ID is WS-48213. Thanks', 'workspace_id', 'WS-48213'],
  ])('reads %j as %s = %j, its evidence whole words of the message', async (text, key, value) => {
    const message = { messageId: '<m2@x>', date: new Date('2026-11-02T09:00:00Z'), text };
    const outcome = await provider.threadPromotion({
      prompt: { system: 's', user: 'u' },
      thread,
      messages: [message],
      replies: [],
      commitments: [],
    });
    if (!outcome.ok) throw new Error('offline provider failed');
    const fact = outcome.value.facts.find((f) => f.key === key);
    expect(fact?.value).toBe(value);
    const at = text.indexOf(fact!.evidence);
    expect(at).toBeGreaterThanOrEqual(0);
    // The quote ends at a word's end: the next character of the message is not a letter or digit.
    expect(text.slice(at + fact!.evidence.length, at + fact!.evidence.length + 1)).not.toMatch(/[\p{L}\p{N}]/u);
  });
});

describe('a help-center answer in the customer’s language', () => {
  const quoted = ['Open Settings > Security and choose Reset sessions.'];
  it.each([
    ['en', 'Thank you for your email. This is what our help center says about it:'],
    ['de', 'Dazu steht in unserem Hilfe-Center:'],
    ['fr', 'Voici ce qu’indique notre centre d’aide'],
    ['es', 'Esto es lo que indica nuestro centro de ayuda:'],
    ['nl', 'Dit staat er in ons helpcentrum over:'],
    ['sv', 'Så här står det i vårt hjälpcenter:'],
    ['it', 'Ecco cosa dice il nostro centro assistenza:'],
    ['pt', 'Eis o que diz o nosso centro de ajuda:'],
    ['ru', 'Вот что говорится об этом в нашем справочном центре:'],
    ['ja', 'ヘルプセンターには次のように記載されています。'],
    ['zh', '我们的帮助中心对此的说明如下：'],
  ] as const)('%s: the lines around the quoted passage are in the customer’s language', (language, lead) => {
    const body = offlineReply({
      language,
      name: null,
      settled: false,
      openItems: [],
      needsHuman: false,
      supportName: 'Acme',
      answer: quoted,
    });
    expect(body).toContain(lead);
    expect(body).toContain(quoted[0]);
    if (language !== 'en') expect(body).not.toMatch(/Thank you for your email|If that does not answer/);
  });
});
