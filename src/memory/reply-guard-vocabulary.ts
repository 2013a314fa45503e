/**
 * The words of the outbound reply guard (src/memory/reply-guard.ts), by rule. Terms are written
 * folded (lower case, accents removed, punctuation as a space: "we'll" is "we ll"); a trailing `*`
 * makes the last word a prefix ("refund*" matches "refunded"). Chinese and Japanese terms are
 * matched as characters. Each list mixes English, German, French, Spanish, Dutch, Italian,
 * Portuguese, Russian and Polish; the guard does not need to know the reply's language.
 */

/** A promise rule: a sentence with a topic term and a cue, the cue not negated or put as "whether". */
export interface PromiseVocabulary {
  topics: string[];
  /** Words that commit or report it done: "we will refund", "approved", "gutgeschrieben". */
  cues: string[];
  /** Chinese/Japanese: the topic, then a cue within a few characters after it ("返金いたします"). */
  cjkTopics: string[];
  cjkAfter: string[];
  /** Chinese only (a sentence without kana): a cue within a few characters before the topic ("为您退款"). */
  cjkBefore: string[];
  /** Only a promise when the sentence also names a date or timeframe ("arrives on Monday"). */
  needsDate?: boolean;
}

const words = (text: string): string[] =>
  text
    .trim()
    .split(/\s*\|\s*/)
    .filter(Boolean);

export const MONEY: PromiseVocabulary = {
  topics: words(`
    refund* | reimburs* | credit* | compensat* | discount* | voucher* | coupon* | gift card* | rebate* | money back | goodwill |
    money | free of charge | complimentary | on the house | at no cost | at no extra cost | at no additional cost | fee | fees | waive* |
    charge | charges | free month* | month free | months free | percent | per cent | partial refund | full refund |
    erstatt* | ruckerstatt* | gutschrift* | gutgeschrieben | gutschreiben | gutschein* | rabatt* | entschadig* | kulanz* | ruckzahlung* |
    geld zuruck | nachlass | preisnachlass | kostenlos | gebuhr* | prozent |
    rembours* | avoir | remise* | reduction* | geste commercial | bon d achat | dedommag* | indemni* | gratuit* | pour cent |
    reembols* | devoluci* | descuento* | credito* | cupon* | compensaci* | bonificaci* | gratis | por ciento | abonad* | abonar* |
    terugbetal* | restitutie | korting* | tegoed* | vergoed* | compensatie | procent |
    rimbors* | sconto | sconti | buono | risarciment* | indennizz* | compensazione | gratuito | per cento |
    estorno* | desconto* | cupom | indeniza* | compensacao | por cento |
    возврат* | компенсац* | скидк* | zwrot* | rabat* | rekompensat* |
    balance | balances | outstanding | amount due | amount owed | invoice | invoices | bill | bills | price | prices | renewal | late fee |
    payment | payments | your money | owe | credit note | store credit | payout |
    saldo | kontostand | rechnung | preis | mahngebuhr | betrag | abbuchung | zahlung | geld |
    solde | facture | prix | frais | montant | prelevement | paiement |
    factura | precio | cargo | cobro | importe | pago | renovacion |
    factuur | prijs | bedrag | kosten | administratiekosten | betaling |
    fattura | prezzo | addebito | importo | pagamento |
    fatura | preco | cobranca | valor | taxa | pagamento |
    баланс | счет* | списани* | плат* | деньги | faktur* | opłat* | obciążeni* | cena | ceny | cenę | płatnoś* | pieniądze |
    difference | differenz | difference | diferencia | verschil | differenza | diferenca`),
  cues: words(`
    voided | void | zeroed | zeroed out | wiped | wiped off | written off | write off | cleared | forgiven | knocked | knocked off |
    halved | cut | reduced | lowered | taken off | took | removed | dropped | adjusted | matched | cancelled | canceled |
    sent back | went through | gone through | returned | paid back | pay you back | ll pay you | will pay you | put | added |
    topped up | covered | absorbed | on us | won t charge | will not charge | won t be charged | will not be charged |
    not be charged | no longer be charged | nothing | ve refunded | have refunded | refunding | reimbursing | crediting |
    credited back | is now on | are now on | you ll find | you will find | now shows | now show |
    zuruckerstattet | zuruckgebucht | storniert | gestrichen | reduziert | halbiert | ausgeglichen | auf null | hinzugefugt |
    annule | annules | annulee | annulees | supprime | supprimes | efface | reduit | reduite | baisse | ajoute | avons rembourse |
    anulado | anulada | anulamos | devuelto | devuelta | hemos devuelto | reducido | rebajado | rebajamos | condonado | eliminado |
    teruggestort | geschrapt | verlaagd | kwijtgescholden | gezet | geannuleerd |
    stornato | stornata | azzerato | azzerata | ridotto | dimezzato | annullato | annullata | abbiamo rimborsato | abbiamo accreditato |
    cancelado | cancelada | zerado | reduzido | removido | removida | devolvido | devolvemos | creditamos |
    вернули | вернем | отменен* | обнулен* | снижен* | zwrocil* | anulowan* | umorzon* | obnizon*`).concat(
    words(`
    refunded | reimbursed | credited | compensated | waived | approved | granted | issued | processed | applied | reversed |
    authorised | authorized | initiated | on its way | on their way | is being processed | are being processed |
    we will refund | we ll refund | i will refund | i ll refund | we are refunding | we re refunding | we shall refund |
    we will reimburse | we ll reimburse | we will credit | we ll credit | i will credit | i ll credit | we will compensate |
    we will waive | we ll waive | i will waive | i ll waive | we will issue | we ll issue | i will issue | i ll issue |
    we will process | we ll process | i will process | i ll process | we will apply | we ll apply | i will apply | i ll apply |
    we will give you | we ll give you | i will give you | i ll give you | we will send you | we ll send you | i ll send you |
    we will add | we ll add | i ll add | we ve added | we have added | i ve added | i have added | have added |
    we can offer | we could offer | i can offer | we d like to offer | we would like to offer | i d like to offer |
    happy to offer | pleased to offer | glad to offer | happy to give | happy to refund | happy to credit | happy to waive |
    we are offering | we re offering | we ve applied | we have applied | i ve applied | i have applied |
    you will receive | you ll receive | you will get | you ll get | you will be getting | you ll be getting |
    you will see | you ll see | will appear | ll appear | should appear | will be back | make sure you get |
    you are entitled | you re entitled | you are eligible | you re eligible | you qualify | here is your | here s your |
    gutgeschrieben | gutschreiben | erstatten | erstattet | zuruckerstattet | zuruckgezahlt | ausgezahlt | uberwiesen | genehmigt |
    bewilligt | erlassen | gewahrt | gewahren | sie erhalten | erhalten sie | bekommen sie | sie bekommen | zukommen lassen |
    rembourse | remboursee | rembourses | remboursees | remboursons | rembourserons | rembourserai | vous rembourser |
    credite | creditee | crediterons | accorde | accordee | accordons | approuve | approuvee | valide | validee |
    vous recevrez | vous allez recevoir | vous beneficiez | vous beneficierez | offert | offerte | offrons |
    reembolsado | reembolsada | reembolsaremos | reembolsamos | vamos a reembolsar | le reembolsaremos | aprobado | aprobada |
    acreditado | acreditada | abonado | abonada | abonaremos | recibira | recibiras | va a recibir | concedido | concedida |
    otorgado | otorgada | aplicado | aplicada |
    terugbetaald | teruggestort | storten wij | wij storten | goedgekeurd | toegekend | gecrediteerd | ontvangt u | u ontvangt |
    krijgt u | u krijgt | wij betalen | betalen wij | vergoeden wij | wij vergoeden | vergoed |
    rimborsato | rimborsata | rimborseremo | le rimborseremo | approvato | approvata | accreditato | accreditata |
    concesso | concessa | ricevera | riceverai | applicato | applicata | emesso |
    reembolsaremos | vamos reembolsar | aprovado | aprovada | creditado | creditada | estornado | estornada |
    recebera | vai receber | concedemos |
    одобрен* | вы получите | мы вернем | мы вернули | начислен* | оформлен |
    zatwierdzon* | otrzyma pan | otrzyma pani | otrzymasz | zwrocimy`),
  ),
  cjkTopics: words(
    '返金 | 払い戻し | 払戻 | 返還 | 割引 | クーポン | 補償 | 値引 | 無料 | 料金 | 請求 | 退款 | 退还 | 返还 | 退费 | 折扣 | 优惠 | 代金券 | 补偿 | 赔偿 | 免费',
  ),
  cjkAfter: words(`
    いたします | 致します | します | しました | いたしました | 致しました | させていただきます | させて頂きます | されます | されました | 免除 |
    承認 | 完了 | 適用 | 発行 | 付与 | 振込 | 振り込 | 手配 |
    已批准 | 已处理 | 已完成 | 已发放 | 已到账 | 已退回 | 批准了 | 成功 | 将在 | 会在 | 已经`),
  cjkBefore: words('已 | 已经 | 将 | 将会 | 会 | 为您 | 给您 | 帮您 | 马上'),
};

export const PLAN: PromiseVocabulary = {
  topics: words(`
    plan | plans | tier* | subscription* | membership* | upgrade* | downgrade* | licen* | seat | seats | trial | premium | enterprise |
    tarif* | abo | abonnement* | vertrag | mitgliedschaft | paket* | forfait* | formule | offre |
    suscripci* | tarifa* | pakket* | abbonament* | piano | pacchetto | assinatura* | plano | pacote | formule annuelle | workspace |
    billing | annual | monthly | storage | quota`),
  cues: words(`
    upgraded | downgraded | switched | activated | cancelled | canceled | terminated | extended | renewed | moved you |
    bumped | moved | put you on | changed | swapped | converted | unlocked | increased | raised | doubled | now includes | gratuitamente |
    est passe | passee | cambiado | mudamos | mudou | alterada | rinnovato |
    we will upgrade | we ll upgrade | i will upgrade | i ll upgrade | we will downgrade | we ll downgrade |
    we will cancel | we ll cancel | i will cancel | i ll cancel | we will switch | we ll switch | we will extend | we ll extend |
    we will move you | we ll move you | you are now on | you re now on | you now have | is now active | now includes |
    umgestellt | hochgestuft | herabgestuft | gekundigt | storniert | aktiviert | verlangert | upgegradet | stellen wir |
    resilie | resiliee | annule | annulee | mis a niveau | prolonge | prolongee |
    cancelado | cancelada | activado | activada | cambiado | cambiada | renovado | renovada | mejorado | ampliado |
    actualizado | actualizada | hemos actualizado | hemos pasado | migrado | migrada |
    opgezegd | geannuleerd | geactiveerd | gewijzigd | geupgraded | verlengd | omgezet |
    annullato | annullata | disdetto | attivato | attivata | rinnovato | rinnovata | aggiornato | aggiornata | abbiamo aggiornato |
    ativado | ativada | alterado | alterada | renovada | atualizamos | atualizado | atualizada | migramos | migrado | migrada`),
  cjkTopics: words('プラン | 契約 | サブスク | 会員 | アップグレード | ダウングレード | 套餐 | 会员 | 订阅 | 升级 | 降级'),
  cjkAfter: words(
    'を変更しました | 変更いたしました | 変更しました | 解約いたしました | 解約しました | いたしました | しました | 完了 | 已升级 | 已取消 | 已变更 | 已开通 | 成功',
  ),
  cjkBefore: words('已 | 已经 | 为您 | 给您 | 帮您 | 将'),
};

export const ACCOUNT: PromiseVocabulary = {
  topics: words(`
    account | accounts | password | email address | e mail address | login | profile | username | user | data | 2fa | two factor |
    konto | benutzerkonto | zugang | passwort | kennwort | daten | compte | mot de passe | donnees | cuenta | contrasena | datos |
    wachtwoord | gegevens | dati | conta | senha | dados |
    hold | holds | security hold | lock | block | restriction* | suspension | freeze | access | payout |
    sperre | sperrung | einschrankung* | zugriff | blocage | acces | bloqueo | restriccion* | retencion | acceso |
    blokkade | beperking* | toegang | blocco | sospensione | accesso | bloqueio | restricao | acesso |
    блокировк* | ограничени* | доступ | blokad* | dostep`),
  cues: words(`
    deleted | closed | removed | erased | reactivated | unlocked | merged | restored | deactivated | disabled | suspended |
    lifted | lift | released | unfrozen | unblocked | reinstated | cleared | taken off | reactivate | unlock | is unlocked |
    aufgehoben | freigegeben | wieder entsperrt | leve | levee | levons | avons leve | levantado | levantada | hemos levantado |
    opgeheven | vrijgegeven | rimosso | rimossa | revocato | abbiamo sbloccato | liberado | liberada | removido |
    снята | снят | разблокирован* | zdjet* | odblokowan* | hemos desbloqueado |
    ve reset | have reset | been reset | was reset | ve changed | have changed | ve updated | have updated |
    we will delete | we ll delete | i will delete | i ll delete | we will close | we ll close | we will remove | we ll remove |
    we will unlock | we ll unlock | we will reactivate | we ll reactivate |
    geloscht | geschlossen | entsperrt | reaktiviert | zuruckgesetzt | deaktiviert | gesperrt | loschen wir | geandert |
    supprime | supprimee | supprimes | supprimees | ferme | fermee | debloque | debloquee | reactive | reinitialise | desactive |
    eliminado | eliminada | eliminados | cerrado | cerrada | desbloqueado | desbloqueada | reactivado | reactivada |
    restablecido | restablecida | desactivado | desactivada | borrado | borrados |
    verwijderd | gesloten | ontgrendeld | gereactiveerd | gereset | gedeactiveerd |
    eliminato | eliminata | eliminati | chiuso | sbloccato | riattivato | reimpostato | disattivato | cancellato | cancellati |
    excluida | excluido | excluidos | encerrada | desbloqueada | reativada | redefinida | desativada | apagados`),
  cjkTopics: words('アカウント | パスワード | 個人データ | ロック | 账户 | 账号 | 帐户 | 密码 | 数据'),
  cjkAfter: words(
    '削除し | 削除い | 削除致 | 解除し | 解除い | リセットし | リセットい | 閉鎖 | 停止し | 再開し | 已删除 | 已注销 | 已解锁 | 已重置 | 已关闭 | 已恢复',
  ),
  cjkBefore: words('已 | 已经 | 已为您'),
};

/** Delivery of goods on a date: an order "will arrive on Thursday" (only with a date in the sentence). */
export const DELIVERY: PromiseVocabulary = {
  topics: words(`
    order | package | parcel | shipment | delivery | replacement | item | items | goods | device | router | it |
    bestellung | paket | sendung | lieferung | ersatz* | gerat | commande | colis | livraison | remplacement | appareil |
    pedido | paquete | envio | reemplazo | dispositivo | bestelling | pakket | zending | levering | vervang* | apparaat |
    ordine | pacco | spedizione | sostituzione | encomenda | pacote | entrega | substitui* | заказ | посылк* | zamowieni* | paczk*`),
  cues: words(`
    will arrive | ll arrive | arrives | arriving | will be delivered | ll be delivered | be delivered | will be shipped | ships |
    will ship | ll ship | dispatched | will reach you | ll reach you | reach you | will be with you | ll be with you | ll have it |
    will have it | guaranteed | out for delivery |
    wird geliefert | geliefert | zugestellt | versandt | verschickt | kommt | trifft | sera livre | sera livree | livre | livree |
    expedie | expediee | arrivera | recevrez | llegara | sera entregado | entregado | recibira | wordt geleverd | geleverd |
    verzonden | komt | ontvangt | arrivera | sara consegnato | consegnato | ricevera | chegara | sera entregue | recebera |
    доставим | будет доставлен* | придет | dostarczym* | dotrze | お届け`),
  cjkTopics: words('交換品 | 商品 | 荷物 | ご注文 | 订单 | 包裹 | 商品 | 快递'),
  cjkAfter: words('お届け | 届き | 到着 | 発送 | 送达 | 到达 | 发货 | 寄出'),
  cjkBefore: words('将 | 会'),
  needsDate: true,
};

/** A deadline: something fixed, resolved or ready by a date ("fixed by Friday"; only with a date in the sentence). */
export const DEADLINE: PromiseVocabulary = {
  topics: [],
  cues: words(`
    fixed | resolved | ready | done | completed | sorted | back online | restored | unlocked | live | will ship | ll ship |
    ll have | will have | no later than | at the latest | guarantee |
    behoben | gelost | erledigt | fertig | spatestens | corrige | corrigee | resolu | resolue | pret | prete | au plus tard |
    resuelto | resuelta | listo | lista | arreglado | a mas tardar | tendremos | opgelost | klaar | hersteld | uiterlijk |
    risolto | risolta | pronto | pronta | sistemato | al piu tardi | resolvido | resolvida | corrigido | no maximo |
    исправ* | решен* | готов* | najpozniej | naprawion* | rozwiazan*`),
  cjkTopics: [],
  cjkAfter: [],
  cjkBefore: [],
  needsDate: true,
};

/** A sentence opening with one of these is a condition, not a promise ("If you'd like a refund, …"). */
export const CONDITIONALS = words(`
    if | unless | should you | in case | provided | falls | wenn | sofern | sollten sie | si vous | si usted | si desea | si quiere |
    si lo desea | si necesita | se desejar | se quiser | se voce | se lei | se desidera | als u | indien | mocht | если | jesli | jezeli`);
export const CJK_CONDITIONALS = words('もし | 場合 | 如果 | 假如 | 若');

/** Words of a general statement ("our refund policy", "usually"): with no "you"/"your", it promises nothing. */
export const POLICY_MARKERS = words(`
  policy | policies | terms | generally | usually | typically | normally | in general | as a rule | standard |
  richtlinie* | in der regel | normalerweise | grundsatzlich | politique | en general | generalement | normalement |
  politica | por lo general | normalmente | generalmente | beleid | doorgaans | meestal | normaal | di solito | solitamente |
  di norma | geralmente | правил* | обычно | zasad* | zazwyczaj | zwykle`);
export const PERSONAL = new Set(
  words(`
    you | your | yours | ihr | ihre | ihren | ihrem | ihrer | ihnen | sie | dein | deine | votre | vos | vous | tu | ton | ta | su | sus |
    usted | le | uw | u | je | jouw | suo | sua | tuo | tua | lei | seu | voce | ваш | ваша | вам | вы | twoj | twoja | pan | pani`),
);

/** Words before a cue (within three words) that turn it into a refusal: "has not been approved". */
export const NEGATIONS = new Set(
  words(`
    not | no | never | cannot | can t | won t | don t | isn t | aren t | wasn t | unable | neither | nor |
    nicht | kein | keine | keinen | keiner | nie | niemals | ne | pas | aucun | aucune | jamais | nunca | ningun | ninguna | tampoco |
    niet | geen | nooit | non | nessun | nessuna | mai | nao | nenhum | nenhuma | нет | не | nie`),
);
export const CJK_NEGATIONS = words(
  'できません | いたしかねます | 致しかねます | かねます | ません | 不可 | 不能 | 无法 | 不会 | 没有 | 未 | 不',
);

/** "Whether" before a cue: a colleague checking whether something can be done promises nothing. */
export const SOFTENERS = words(`
  whether | ob | verifier si | examiner si | voir si | regarder si | comprobar si | revisar si | verificar si | ver si | analizar si |
  nagaan of | kijken of | bekijken of | controleren of | bekijkt of | kijkt of | controleert of | nagaat of | onderzoekt of | verificare se | valutare se | capire se | verificar se | analisar se |
  проверить`);
export const CJK_SOFTENERS = words('かどうか | 可否 | 是否 | 能否 | 可否か');

/** Legal statements: any of these in a reply needs a person, whatever surrounds it. */
export const LEGAL = words(`
  liable | liability | liabilities | legal action | legal steps | lawsuit | sue us | sue you | lawyer | lawyers | attorney | attorneys | court |
  courts | our fault | we admit | we accept responsibility | we take full responsibility | we take responsibility | we guarantee |
  guaranteed | we warrant | gdpr | data protection | breach of contract | in breach | negligence | negligent | legally |
  consumer rights | ombudsman | small claims | compensation claim | statutory |
  haftung | haften | haftbar | rechtliche schritte | anwalt | anwaltin | rechtsanwalt | gericht | klage | verschulden |
  schadensersatz | dsgvo | datenschutz* | wir garantieren | garantieren wir | verbraucherschutz |
  notre responsabilite | nous reconnaissons | nous garantissons | avocat | tribunal | poursuites | action en justice | rgpd |
  protection des donnees | dommages et interets | faute de notre part |
  responsabilidad | nuestra culpa | garantizamos | abogado | abogados | demanda judicial | acciones legales |
  proteccion de datos | danos y perjuicios |
  aansprakelijk* | wij garanderen | advocaat | rechter | rechtbank | juridische stappen | de avg | gegevensbescherming | schadevergoeding |
  responsabilita | garantiamo | avvocato | tribunale | azioni legali | azione legale | protezione dei dati | risarcimento danni |
  responsabilidade | garantimos | advogado | acao judicial | processo judicial | lgpd | protecao de dados | indenizacao |
  юрист* | суд | ответственност* | гарантируем | odpowiedzialnosc* | prawnik | rodo`);
export const CJK_LEGAL = words(
  '弁護士 | 訴訟 | 法的 | 賠償 | 責任を負 | 弊社の責任 | 保証いたします | 保証します | 個人情報保護 | 裁判 | 律师 | 诉讼 | 法律责任 | 赔偿责任 | 承担责任 | 我们保证 | 法院 | 个人信息保护 | 数据保护',
);
