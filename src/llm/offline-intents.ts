/**
 * The offline provider's intent (rules, not a model): the first intent, in a fixed order, whose
 * keywords the subject or the newest email names, in English and in the other languages of
 * `fixtures/emails/` (German, French, Spanish, Dutch, Swedish, Italian, Portuguese, Russian,
 * Japanese, Chinese); `general_inquiry` when none does. Keywords are word starts for alphabetic
 * scripts ("rückerstatt" matches "Rückerstattung", not "Überrückerstattung") and plain substrings
 * for Chinese and Japanese, which do not separate words. One alternation per intent: linear time.
 */

interface IntentKeywords {
  intent: string;
  /** English patterns, as before (ASCII word edges). */
  english: RegExp;
  /** Word starts in the other alphabetic languages (Latin and Cyrillic). */
  words: readonly string[];
  /** Substrings in Chinese and Japanese. */
  cjk: readonly string[];
}

const KEYWORDS: readonly IntentKeywords[] = [
  {
    intent: 'refund_request',
    english: /\brefund|money back|reimburs/i,
    words: [
      'rückerstatt',
      'erstatt',
      'geld zurück',
      'rembours',
      'reembols',
      'devolución',
      'devolucion',
      'terugbetal',
      'geld terug',
      'terugstort',
      'återbetal',
      'rimbors',
      'возврат',
      'вернуть деньги',
      'вернуть средства',
    ],
    cjk: ['返金', '払い戻', '退款', '退还', '退費'],
  },
  {
    intent: 'cancellation',
    english: /\bcancel/i,
    words: [
      'kündig',
      'résili',
      'annuler',
      'cancelar',
      'cancelación',
      'darse de baja',
      'opzeg',
      'annuleer',
      'annuleren',
      'säga upp',
      'uppsägning',
      'avsluta',
      'disdett',
      'disdire',
      'annullare',
      'отмен',
      'расторг',
    ],
    cjk: ['解約', '退会', '取消订阅', '退订', '取消'],
  },
  {
    intent: 'plan_change',
    english: /\bupgrade|downgrade|\bplan\b|\btier\b|enterprise/i,
    words: [
      'tarif',
      'forfait',
      'mise à niveau',
      'cambiar de plan',
      'abonnement wechseln',
      'abonnement upgraden',
      'тариф',
      'перейти на план',
    ],
    cjk: ['プラン', 'アップグレード', '套餐', '升级', '版本升级'],
  },
  {
    intent: 'billing_question',
    english: /invoice|billing|bill\b|charged|charge\b|payment|receipt/i,
    words: [
      'rechnung',
      'abbuchung',
      'zahlung',
      'lastschrift',
      'factur',
      'paiement',
      'prélèvement',
      'cobro',
      'pago',
      'cargo',
      'factuur',
      'betaling',
      'faktura',
      'betalning',
      'fattur',
      'pagament',
      'addebit',
      'cobrança',
      'счёт',
      'счет',
      'оплат',
      'платёж',
      'платеж',
      'акт за',
      'списан',
    ],
    cjk: ['請求', '支払', '領収書', '発票', '发票', '扣费', '付款', '账单', '收费'],
  },
  {
    intent: 'shipping_status',
    english: /ship|deliver|tracking|parcel|package|courier/i,
    words: [
      'liefer',
      'sendung',
      'paket',
      'versand',
      'zustell',
      'livraison',
      'colis',
      'expédi',
      'transporteur',
      'envío',
      'envio',
      'entrega',
      'paquete',
      'levering',
      'pakket',
      'bezorg',
      'verzend',
      'leverans',
      'spedizion',
      'consegn',
      'pacco',
      'encomenda',
      'доставк',
      'посылк',
      'отправк',
    ],
    cjk: ['配送', '発送', '配達', '物流', '快递', '发货', '包裹'],
  },
  {
    intent: 'account_access',
    english: /password|log ?in|sign ?in|2fa|two-factor|locked out/i,
    words: [
      'passwort',
      'anmeld',
      'einlogg',
      'mot de passe',
      'connexion',
      'se connecter',
      'contraseña',
      'iniciar sesión',
      'wachtwoord',
      'inlogg',
      'lösenord',
      'logga in',
      'accesso',
      'senha',
      'пароль',
      'войти',
      'вход в',
    ],
    cjk: ['ログイン', 'パスワード', '登录', '密码', '登入'],
  },
  {
    intent: 'bug_report',
    english: /\bbug\b|error|crash|broken|does(?:n't| not) work|not working|fails?\b/i,
    words: [
      'fehler',
      'funktioniert nicht',
      'absturz',
      'stürzt',
      'erreur',
      'ne fonctionne pas',
      'plante',
      'no funciona',
      'fallo',
      'foutmelding',
      'fout',
      'loopt vast',
      'werkt niet',
      'fungerar inte',
      'kraschar',
      'errore',
      'non funziona',
      'não funciona',
      'ошибк',
      'не работает',
      'сбой',
    ],
    cjk: ['エラー', '不具合', '错误', '故障', '报错', '无法'],
  },
  {
    intent: 'feature_request',
    english: /feature|would be (?:great|nice)|could you add|suggest/i,
    words: [
      'funktion hinzufügen',
      'wäre schön',
      'fonctionnalité',
      'serait bien',
      'nueva función',
      'sería genial',
      'toevoegen',
      'zou fijn',
      'lägga till',
      'nuova funzione',
      'funcionalidade',
      'добавить функц',
      'добавьте',
    ],
    cjk: ['機能追加', '追加してほしい', '新功能', '增加功能', '添加功能'],
  },
];

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const PATTERNS: ReadonlyArray<[RegExp, string]> = KEYWORDS.map((k) => [
  new RegExp(`${k.english.source}|(?<![\\p{L}])(?:${k.words.map(escape).join('|')})|${k.cjk.map(escape).join('|')}`, 'iu'),
  k.intent,
]);

/** Characters of subject and email the rules read. */
const MAX_INTENT_CHARS = 20_000;

/** The intent of a subject and email: the first whose keywords occur, else `general_inquiry`. */
export function intentOf(text: string): string {
  const sample = text.slice(0, MAX_INTENT_CHARS);
  return PATTERNS.find(([pattern]) => pattern.test(sample))?.[1] ?? 'general_inquiry';
}
