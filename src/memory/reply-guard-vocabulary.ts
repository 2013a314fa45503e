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
    возврат* | компенсац* | скидк* | zwrot* | rabat* | rekompensat*`),
  cues: words(`
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
  cjkTopics: words(
    '返金 | 払い戻し | 払戻 | 返還 | 割引 | クーポン | 補償 | 値引 | 無料 | 退款 | 退还 | 返还 | 退费 | 折扣 | 优惠 | 代金券 | 补偿 | 赔偿 | 免费',
  ),
  cjkAfter: words(`
    いたします | 致します | します | しました | いたしました | 致しました | させていただきます | させて頂きます | されます | されました |
    承認 | 完了 | 適用 | 発行 | 付与 | 振込 | 振り込 | 手配 |
    已批准 | 已处理 | 已完成 | 已发放 | 已到账 | 已退回 | 批准了 | 成功 | 将在 | 会在 | 已经`),
  cjkBefore: words('已 | 已经 | 将 | 将会 | 会 | 为您 | 给您 | 帮您 | 马上'),
};

export const PLAN: PromiseVocabulary = {
  topics: words(`
    plan | plans | tier* | subscription* | membership* | upgrade* | downgrade* | licen* | seat | seats | trial | premium | enterprise |
    tarif* | abo | abonnement* | vertrag | mitgliedschaft | paket* | forfait* | formule | offre |
    suscripci* | tarifa* | pakket* | abbonament* | piano | pacchetto | assinatura* | plano | pacote`),
  cues: words(`
    upgraded | downgraded | switched | activated | cancelled | canceled | terminated | extended | renewed | moved you |
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
    wachtwoord | gegevens | dati | conta | senha | dados`),
  cues: words(`
    deleted | closed | removed | erased | reactivated | unlocked | merged | restored | deactivated | disabled | suspended |
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
  cjkTopics: words('アカウント | パスワード | 個人データ | 账户 | 账号 | 帐户 | 密码 | 数据'),
  cjkAfter: words(
    '削除し | 削除い | 削除致 | 解除し | 解除い | リセットし | リセットい | 閉鎖 | 停止し | 再開し | 已删除 | 已注销 | 已解锁 | 已重置 | 已关闭 | 已恢复',
  ),
  cjkBefore: words('已 | 已经 | 已为您'),
};

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
  nagaan of | kijken of | bekijken of | controleren of | verificare se | valutare se | capire se | verificar se | analisar se |
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
