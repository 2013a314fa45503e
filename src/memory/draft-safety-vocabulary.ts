/**
 * The words of the draft safety rules (src/memory/draft-safety.ts): what a reply must never ask a
 * customer for, and the words that ask. Terms are folded as in reply-guard-vocabulary.ts (lower
 * case, no accents, punctuation as a space; a trailing `*` is a word prefix). Languages: those the
 * mail reader and the reply guard read — English, German, French, Spanish, Dutch, Italian,
 * Portuguese, Russian, Polish, and Japanese and Chinese (matched as characters).
 */

/** One kind of secret: its name in a finding, its words, and its words in Chinese/Japanese. */
export interface SecretKind {
  name: string;
  terms: string[];
  cjk: string[];
}

const words = (text: string): string[] =>
  text
    .trim()
    .split(/\s*\|\s*/)
    .filter(Boolean);

export const SECRETS: SecretKind[] = [
  {
    name: 'a full card number',
    terms: words(`
      card number | card numbers | credit card number | debit card number | card no | card details | long number on your card |
      number on your card | number on the front | 16 digit number | 16 digits | full card | whole card number |
      kartennummer | kreditkartennummer | kartendaten | kreditkartendaten | numero de carte | numero de la carte | numeros de carte |
      coordonnees bancaires | numero de tarjeta | numero de la tarjeta | datos de la tarjeta | kaartnummer | creditcardnummer |
      kaartgegevens | numero della carta | numero di carta | dati della carta | numero do cartao | dados do cartao |
      номер карты | номер вашей карты | данные карты | numer karty | dane karty`),
    cjk: words('カード番号 | クレジットカード番号 | カード情報 | 卡号 | 银行卡号 | 信用卡号 | 卡片号码 | 信用卡信息'),
  },
  {
    name: 'a card security code (CVV)',
    terms: words(`
      cvv | cvv2 | cvc | cvc2 | csc | security code | card verification | verification value | code on the back |
      digits on the back | 3 digit code | three digit code | prufnummer | prufziffer | kartenprufnummer | sicherheitscode |
      cryptogramme | code de securite | codigo de seguridad | beveiligingscode | codice di sicurezza | codice cvv |
      codigo de seguranca | код безопасности | kod cvv | kod zabezpieczajacy`),
    cjk: words('セキュリティコード | 安全码 | 验证码 CVV | 卡背面'),
  },
  {
    name: 'a password or PIN',
    terms: words(`
      password | passwords | passcode | pin | pin code | pin number | login details | login credentials | credentials |
      passwort | kennwort | zugangsdaten | geheimzahl | mot de passe | identifiants | code pin | contrasena | clave |
      wachtwoord | inloggegevens | pincode | credenziali | senha | пароль | пин код | haslo`),
    cjk: words('パスワード | 暗証番号 | 密码 | 口令'),
  },
  {
    name: 'a one-time or verification code',
    terms: words(`
      one time code | one time password | one time passcode | otp | verification code | 2fa code | two factor code |
      authentication code | auth code | sms code | login code | code we sent | code you received | code you got | tan |
      bestatigungscode | einmalcode | einmalpasswort | verifizierungscode | sicherheitscode per sms |
      code de verification | code a usage unique | code recu par sms | code de confirmation |
      codigo de verificacion | codigo de un solo uso | codigo que recibio | verificatiecode | sms code | eenmalige code |
      codice di verifica | codice otp | codice monouso | codigo de verificacao | codigo sms |
      код подтверждения | код из смс | одноразовый код | kod weryfikacyjny | kod sms | jednorazowy kod`),
    cjk: words('認証コード | 確認コード | ワンタイムパスワード | ワンタイムコード | 验证码 | 动态码 | 一次性密码 | 短信码'),
  },
];

/** Words that ask the customer to give something ("send us", "confirm", "what is your"). */
export const ASKS = words(`
  send* | provide | provides | providing | share* | give us | give me | tell us | tell me | let us know | reply with | respond with | write back with |
  include* | confirm* | supply | submit* | forward* | disclose | read out | read us | type it here | what is your | what s your |
  need your | require your | ask for | ask you for | asking for | ask the customer* | ask the client* | ask them | ask the user* | request your | verify your identity with |
  senden* | schicken* | ubermitteln | ubermitteln sie | teilen sie | mitteilen | nennen | nennen sie | geben sie | angeben |
  bestatigen | bestatigen sie | zukommen lassen | antworten sie mit | benotigen ihr* | brauchen ihr* |
  envoy* | communiqu* | indiqu* | fournir | fournissez | fournisse | transmet* | donnez | confirm* | precisez | preciser | faites nous parvenir | nous faut |
  envie* | envia* | enviar* | proporcione | proporcionar | proporcionenos | facilite | facilitenos | facilitarnos | indique* | indicar* | compart* | diganos | digame | necesitamos |
  stuur* | geef | deel | vermeld* | doorgeven | doorgeeft | bevestig* | hebben uw | nodig |
  invii | inviaci | inviare | fornisc* | fornire | comunic* | indichi | indicare | condivid* | ci dica | abbiamo bisogno |
  envie | informe* | informar | forneca | fornecer | compartilhe | diga | precisamos |
  сообщите | пришлите | отправьте | укажите | назовите | продиктуйте | подтвердите |
  podaj | podac | prosze podac | przeslij | przeslac | wyslij | wyslac | potwierdz`);
export const CJK_ASKS = words(
  '教えて | お知らせ | お送り | 送って | 送信して | ご提供 | ご連絡 | ご返信 | お伝え | ご記入 | ご入力 | 提供 | 发送 | 发给 | 告诉 | 回复 | 输入 | 填写 | 确认',
);

/**
 * Words that make a request a refusal or a warning ("never send", "do not share", "nie"); looked
 * for just before the asking word (through the words of TRANSPARENT) and up to two words after the
 * secret ("teilen Sie Ihr Passwort nicht mit").
 */
export const REFUSALS = new Set(
  words(`
    not | no | never | don t | do not | won t | dont | nobody | no one |
    nicht | nie | niemals | kein | keine | keinesfalls | ne | pas | jamais | aucun | nunca | no | jamas | ningun |
    niet | nooit | geen | non | mai | nao | nunca | не | никогда | nie | nigdy`),
);
/** Words walked over when looking back from an asking word for a refusal ("you do not need to send"). */
export const TRANSPARENT = new Set(
  words(`
    to | need | needs | have | ever | be | will | would | should | must | please | us | you | we | re | ll | asked | required | also |
    sie | uns | ihnen | bitte | nous | vous | jamais | nos | le | les | u | ons | ci | ce | ti | nos | por favor | favor`),
);
/** Phrases whose negation is a courtesy, not a refusal ("don't hesitate to send"). */
export const COURTESY = words(
  'hesitate | zogern | hesitez | hesite | dude | dude en | aarzel | esiti | hesite em | hesitar | стесняйтесь | wahaj',
);
export const CJK_REFUSALS = words('ないで | しないで | ません | 不要 | 请勿 | 切勿 | 绝不 | 不会 | 从不 | 禁止 | 決して');

/** "The last four digits": not a full card number, unless the clause also says "full". */
export const LAST_DIGITS = words(`
  last four | last 4 | final four | final 4 | letzten vier | letzten 4 | quatre derniers | 4 derniers | ultimos cuatro | ultimos 4 |
  laatste vier | laatste 4 | ultime quattro | ultime 4 | ultimos quatro | последние четыре | последние 4 | ostatnie cztery | ostatnie 4`);
export const FULL = words(
  'full | complete | entire | whole | vollstandig* | ganze | complet* | entier | entiere | volledig* | completo | completa | intero | integral | полный | pelny',
);
