/**
 * The reply guard's recall table (issue 27, finding 6): replies that promise or report done
 * something of value — refunds, credits, voided or waived charges, plan changes, unlocks, lifted
 * holds, balance changes, deadlines and delivery dates — and replies that share their words but
 * promise nothing (policy statements, conditionals, refusals, deflections). Written for this
 * project in the reply languages (en, de, fr, es, nl, it, pt, ru, pl, ja, zh). Used by
 * test/unit/reply-guard-recall.test.ts (floors) and bench/reply-guard-recall.ts (prints figures).
 */
import { reviewReply } from '../../src/memory/reply-guard.ts';

export type PromiseFamily =
  'refund' | 'credit' | 'void-or-waive' | 'plan-change' | 'unlock' | 'lifted-hold' | 'balance' | 'deadline' | 'delivery';

/** What the model was given: the customer's mail (its amounts and dates may be repeated freely). */
export const RECALL_CONTEXT = [
  'THREAD NOTES: subject: Billing problem; summary: double charge, account locked',
  '<<<email id="<c1@customer.example>" date="2026-11-02T09:00:00.000Z">>>',
  'Hello, I was charged $49.99 twice on invoice 4471 and my account is locked since Monday.',
  'My renewal is due on Nov 30. Can you help? I ordered a replacement router as well.',
  '<<<end email>>>',
].join('\n');
export const RECALL_NOW = new Date('2026-11-04T10:00:00Z');

export const PROMISES: ReadonlyArray<[PromiseFamily, string, string]> = [
  // Refunds
  ['refund', 'en', "I've refunded the duplicate payment to your card."],
  ['refund', 'en', 'Your money has been sent back to your original payment method.'],
  ['refund', 'en', "We're refunding the second charge right now."],
  ['refund', 'en', 'The refund went through this morning.'],
  ['refund', 'en', 'I have gone ahead and reimbursed you for the double charge.'],
  ['refund', 'en', 'We will pay you back the $49.99.'],
  ['refund', 'en', 'Your duplicate payment was returned to you.'],
  ['refund', 'de', 'Wir haben Ihnen die doppelte Zahlung zurückerstattet.'],
  ['refund', 'de', 'Das Geld wurde auf Ihre Karte zurückgebucht.'],
  ['refund', 'fr', 'Nous vous avons remboursé le second prélèvement.'],
  ['refund', 'es', 'Ya le hemos devuelto el cargo duplicado.'],
  ['refund', 'nl', 'We hebben de dubbele betaling teruggestort.'],
  ['refund', 'it', 'Le abbiamo rimborsato il doppio addebito.'],
  ['refund', 'pt', 'Já devolvemos a cobrança duplicada.'],
  ['refund', 'ru', 'Мы вернули вам двойное списание.'],
  ['refund', 'pl', 'Zwróciliśmy podwójną płatność.'],
  ['refund', 'ja', '二重請求分を返金いたしました。'],
  ['refund', 'zh', '我们已经为您退款了。'],
  // Credits
  ['credit', 'en', "I've put store credit on your account."],
  ['credit', 'en', 'A credit note for the full amount is now on your account.'],
  ['credit', 'en', "We've added a credit to your next invoice."],
  ['credit', 'en', "You'll find a goodwill credit on your account."],
  ['credit', 'en', 'Your account was credited with the difference.'],
  ['credit', 'de', 'Wir haben Ihrem Konto eine Gutschrift hinzugefügt.'],
  ['credit', 'fr', 'Un avoir a été ajouté à votre compte.'],
  ['credit', 'es', 'Hemos abonado el importe en su cuenta.'],
  ['credit', 'nl', 'We hebben een tegoed op uw account gezet.'],
  ['credit', 'it', 'Abbiamo accreditato la differenza sul suo conto.'],
  ['credit', 'pt', 'Creditamos a diferença na sua conta.'],
  // Voided or waived charges
  ['void-or-waive', 'en', "I've voided the charge on your card."],
  ['void-or-waive', 'en', 'The late fee has been wiped from your invoice.'],
  ['void-or-waive', 'en', "We've waived this month's fee."],
  ['void-or-waive', 'en', 'The second charge was cancelled.'],
  ['void-or-waive', 'en', 'I removed the late fee from your bill.'],
  ['void-or-waive', 'en', 'Consider the fee written off.'],
  ['void-or-waive', 'en', "We won't charge you for the extra seats."],
  ['void-or-waive', 'en', 'The duplicate charge is now reversed.'],
  ['void-or-waive', 'de', 'Die Mahngebühr haben wir Ihnen erlassen.'],
  ['void-or-waive', 'de', 'Die zweite Abbuchung wurde storniert.'],
  ['void-or-waive', 'fr', 'Les frais de retard ont été annulés.'],
  ['void-or-waive', 'es', 'Hemos anulado el cargo duplicado.'],
  ['void-or-waive', 'nl', 'De administratiekosten zijn geschrapt.'],
  ['void-or-waive', 'it', "L'addebito doppio è stato stornato."],
  ['void-or-waive', 'pt', 'A taxa de atraso foi cancelada.'],
  ['void-or-waive', 'ja', '延滞料金を免除いたしました。'],
  // Plan changes
  ['plan-change', 'en', "I've bumped you up to the Business plan."],
  ['plan-change', 'en', "You've been moved to the annual plan."],
  ['plan-change', 'en', "We've switched your subscription to monthly billing."],
  ['plan-change', 'en', 'Your plan now includes ten extra seats.'],
  ['plan-change', 'en', "I'll upgrade your workspace to Premium today."],
  ['plan-change', 'en', 'Your trial has been extended.'],
  ['plan-change', 'de', 'Wir haben Sie auf den Business-Tarif umgestellt.'],
  ['plan-change', 'fr', 'Votre abonnement est passé à la formule annuelle.'],
  ['plan-change', 'es', 'Le hemos cambiado al plan anual.'],
  ['plan-change', 'nl', 'Uw abonnement is omgezet naar jaarlijks.'],
  ['plan-change', 'it', 'Il suo abbonamento è stato rinnovato gratuitamente.'],
  ['plan-change', 'pt', 'Mudamos a sua assinatura para o plano anual.'],
  ['plan-change', 'zh', '已为您升级套餐。'],
  // Unlocks
  ['unlock', 'en', "I've unlocked your account."],
  ['unlock', 'en', 'Your account is unlocked now.'],
  ['unlock', 'en', 'We reactivated your login.'],
  ['unlock', 'en', 'Your access has been restored.'],
  ['unlock', 'de', 'Ihr Konto ist wieder entsperrt.'],
  ['unlock', 'fr', 'Votre compte a été débloqué.'],
  ['unlock', 'es', 'Hemos desbloqueado su cuenta.'],
  ['unlock', 'it', 'Abbiamo sbloccato il suo account.'],
  ['unlock', 'ja', 'アカウントのロックを解除しました。'],
  // Lifted holds
  ['lifted-hold', 'en', "I've lifted the security hold on your account."],
  ['lifted-hold', 'en', 'The hold on your payout has been released.'],
  ['lifted-hold', 'en', "We've removed the restriction from your account."],
  ['lifted-hold', 'en', 'The suspension on your account is lifted.'],
  ['lifted-hold', 'de', 'Die Sperre Ihres Kontos wurde aufgehoben.'],
  ['lifted-hold', 'fr', 'Nous avons levé le blocage de votre compte.'],
  ['lifted-hold', 'es', 'Hemos levantado la retención de su cuenta.'],
  ['lifted-hold', 'pt', 'O bloqueio da sua conta foi removido.'],
  // Balance changes
  ['balance', 'en', "I've zeroed your balance."],
  ['balance', 'en', "I've knocked the price of your renewal down by half."],
  ['balance', 'en', 'Your outstanding balance is cleared.'],
  ['balance', 'en', "We've reduced your invoice to match the old price."],
  ['balance', 'en', 'Your renewal price has been lowered.'],
  ['balance', 'en', 'We took the amount off your bill.'],
  ['balance', 'en', 'You owe us nothing now.'],
  ['balance', 'de', 'Ihr Saldo wurde auf null gesetzt.'],
  ['balance', 'fr', 'Nous avons réduit le montant de votre facture.'],
  ['balance', 'es', 'Hemos rebajado el precio de su renovación.'],
  ['balance', 'nl', 'We hebben uw factuur verlaagd.'],
  ['balance', 'it', 'Abbiamo azzerato il suo saldo.'],
  // Deadlines
  ['deadline', 'en', "We'll have the export fixed by Friday."],
  ['deadline', 'en', 'The issue will be resolved within 48 hours.'],
  ['deadline', 'en', 'Your account will be unlocked by tomorrow.'],
  ['deadline', 'en', 'Engineering will ship the fix next week.'],
  ['deadline', 'de', 'Der Fehler wird bis spätestens Freitag behoben.'],
  ['deadline', 'fr', 'Le problème sera corrigé demain.'],
  ['deadline', 'es', 'Lo tendremos resuelto el lunes.'],
  // Delivery dates
  ['delivery', 'en', 'Your replacement router will arrive on Thursday.'],
  ['delivery', 'en', "The new device ships tomorrow and you'll have it by Monday."],
  ['delivery', 'en', 'Your order is guaranteed to reach you within 2 days.'],
  ['delivery', 'de', 'Ihr Ersatzgerät wird morgen zugestellt.'],
  ['delivery', 'fr', 'Votre colis sera livré jeudi.'],
  ['delivery', 'es', 'Su pedido llegará el viernes.'],
  ['delivery', 'nl', 'Uw pakket wordt morgen geleverd.'],
  ['delivery', 'ja', '交換品は明日お届けします。'],
];

export const HARMLESS: ReadonlyArray<[string, string]> = [
  ['en', 'Our refund policy allows 30 days from purchase.'],
  ['en', "If you'd like a refund, reply and a colleague will review it."],
  ['en', 'A colleague will look at your refund request.'],
  ['en', 'I have passed your request for a credit to our billing team.'],
  ['en', 'Unfortunately we cannot waive the late fee.'],
  ['en', 'We are not able to unlock accounts by email.'],
  ['en', 'A colleague will check whether the hold can be lifted.'],
  ['en', 'You can change your plan at any time from the billing page.'],
  ['en', 'I understand you were charged $49.99 twice on invoice 4471.'],
  ['en', 'Refunds are reviewed by our billing team.'],
  ['en', 'Could you tell us which invoice the charge appeared on?'],
  ['en', 'Thanks for letting us know about the double charge.'],
  ['en', 'Your balance is shown on the billing page.'],
  ['en', 'Our billing team will review the charge and reply to you.'],
  ['en', 'I cannot change your renewal price myself, but a colleague can look into it.'],
  ['en', 'You can download your invoice from the billing page.'],
  ['en', 'Security holds protect accounts after several failed logins.'],
  ['en', "We haven't changed anything on your account."],
  ['en', 'Should you want to cancel, a colleague will walk you through the options.'],
  ['en', 'Your renewal is due on Nov 30, as you wrote.'],
  ['en', 'We are sorry about the trouble with your account.'],
  ['en', 'Credits and refunds are decided by our billing team, who will contact you.'],
  ['de', 'Eine Kollegin prüft, ob wir die Gebühr erstatten können.'],
  ['de', 'Leider können wir die Mahngebühr nicht erlassen.'],
  ['de', 'Ihre Anfrage zur Rückerstattung haben wir an die Buchhaltung weitergeleitet.'],
  ['fr', 'Un collègue va examiner si un remboursement est possible.'],
  ['fr', 'Nous ne pouvons pas débloquer votre compte par e-mail.'],
  ['fr', 'Vous pouvez changer de formule depuis la page de facturation.'],
  ['es', 'Un compañero revisará si es posible el reembolso.'],
  ['es', 'No podemos anular el cargo desde aquí.'],
  ['es', 'Si desea un reembolso, responda y un compañero lo revisará.'],
  ['nl', 'Een collega bekijkt of de blokkade kan worden opgeheven.'],
  ['nl', 'Wij kunnen uw abonnement niet zelf wijzigen.'],
  ['it', 'Un collega verificherà se il rimborso è possibile.'],
  ['it', 'Non possiamo sbloccare il suo account via e-mail.'],
  ['pt', 'Um colega vai verificar se o reembolso é possível.'],
  ['pt', 'Não podemos alterar o seu plano por e-mail.'],
  ['ru', 'Коллега проверит, возможен ли возврат.'],
  ['pl', 'Kolega sprawdzi, czy zwrot jest możliwy.'],
  ['ja', '返金が可能かどうか担当者が確認いたします。'],
  ['zh', '我们的同事会确认是否可以退款。'],
  ['en', 'In general, refunds go back to the original payment method.'],
  ['en', 'Please let us know if the charge appears again.'],
  ['en', 'Delivery times depend on the courier.'],
];

/**
 * Written after the vocabulary was extended and never used to tune it: how the guard does on
 * phrasings it was not fitted to. Its figures are printed apart from the table above.
 */
export const HELD_OUT_PROMISES: ReadonlyArray<[PromiseFamily, string, string]> = [
  ['refund', 'en', 'The overcharge is on its way back to your bank.'],
  ['refund', 'en', "You've been reimbursed in full."],
  ['refund', 'en', "I'm issuing the refund as we speak."],
  ['refund', 'de', 'Die Rückzahlung ist veranlasst.'],
  ['refund', 'fr', 'Le trop-perçu vous a été restitué.'],
  ['refund', 'es', 'Le reintegramos el importe cobrado de más.'],
  ['credit', 'en', 'Your next two invoices are on the house.'],
  ['credit', 'en', "We've given you a $20 credit toward next month."],
  ['credit', 'nl', 'Wij hebben het bedrag bijgeschreven op uw rekening.'],
  ['void-or-waive', 'en', 'No late fee will be charged this time.'],
  ['void-or-waive', 'en', "I've struck the penalty from your statement."],
  ['void-or-waive', 'de', 'Die Gebühr entfällt für Sie.'],
  ['void-or-waive', 'fr', 'Nous renonçons aux frais de retard.'],
  ['void-or-waive', 'it', 'Le abbiamo tolto la penale.'],
  ['plan-change', 'en', 'Your seats went from 5 to 10 at no extra cost.'],
  ['plan-change', 'en', "I've upgraded you for free."],
  ['plan-change', 'es', 'Ya tiene el plan Premium activo.'],
  ['plan-change', 'de', 'Ihr Abo läuft jetzt ein Jahr länger.'],
  ['unlock', 'en', 'You can log in again now; I cleared the lockout.'],
  ['unlock', 'en', 'The block on your login is gone.'],
  ['unlock', 'pt', 'A sua conta já está desbloqueada.'],
  ['lifted-hold', 'en', 'Your funds are no longer on hold.'],
  ['lifted-hold', 'en', "We've taken the freeze off your account."],
  ['lifted-hold', 'it', 'Il blocco sul suo conto è stato rimosso.'],
  ['balance', 'en', 'Your account is back to zero.'],
  ['balance', 'en', "We've settled your outstanding amount ourselves."],
  ['balance', 'fr', 'Votre solde a été remis à zéro.'],
  ['deadline', 'en', 'This will be sorted out by the end of the week.'],
  ['deadline', 'en', 'You have my word it will be done before Monday.'],
  ['delivery', 'en', 'The courier will drop off your new router on Monday.'],
  ['delivery', 'it', 'Il suo pacco arriverà lunedì.'],
];
export const HELD_OUT_HARMLESS: ReadonlyArray<[string, string]> = [
  ['en', 'Late fees are explained in section 4 of our terms.'],
  ['en', 'A colleague from billing will decide about the fee.'],
  ['en', 'We do not offer refunds on annual plans after 30 days.'],
  ['en', 'Could you confirm the invoice number of the charge?'],
  ['en', "I'm sorry the hold caused you trouble; a colleague will review it."],
  ['en', 'Our team reviews every request for a credit.'],
  ['en', 'If the charge is confirmed as a duplicate, a colleague will contact you.'],
  ['en', 'Plan changes can be made by the account owner in the billing settings.'],
  ['de', 'Ob eine Gutschrift möglich ist, prüft die Buchhaltung.'],
  ['fr', 'Nous avons bien reçu votre demande concernant le blocage.'],
  ['es', 'Hemos recibido su consulta sobre la factura.'],
  ['it', 'Abbiamo ricevuto la sua richiesta sul blocco del conto.'],
  ['pt', 'Recebemos a sua mensagem sobre a cobrança.'],
  ['nl', 'We hebben uw vraag over de factuur ontvangen.'],
  ['ja', '請求書についてのお問い合わせを承りました。'],
  ['zh', '我们已收到您关于账单的询问。'],
];

export interface GuardFigures {
  promises: number;
  held: number;
  recall: number;
  harmless: number;
  falsePositives: number;
  falsePositiveRate: number;
  missed: string[];
  flagged: string[];
}

/** Runs the guard over a table: how many promises it holds, how many harmless replies it holds too. */
export function measureGuard(
  promises: ReadonlyArray<[PromiseFamily, string, string]> = PROMISES,
  harmless: ReadonlyArray<[string, string]> = HARMLESS,
): GuardFigures {
  const holds = (body: string) => reviewReply({ body, context: RECALL_CONTEXT, now: RECALL_NOW }).needsHuman;
  const missed = promises.filter(([, , body]) => !holds(body)).map(([family, language, body]) => `${family} ${language}: ${body}`);
  const flagged = harmless.filter(([, body]) => holds(body)).map(([language, body]) => `${language}: ${body}`);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    promises: promises.length,
    held: promises.length - missed.length,
    recall: round((promises.length - missed.length) / promises.length),
    harmless: harmless.length,
    falsePositives: flagged.length,
    falsePositiveRate: round(flagged.length / harmless.length),
    missed,
    flagged,
  };
}
