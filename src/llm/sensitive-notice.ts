/**
 * The sentence a reply carries when the customer sent card details or credentials by email (their
 * values were masked at ingestion: src/ingest/mask-message.ts). The prompt asks the model to say it
 * (src/memory/sensitive-note.ts); the offline provider says it itself; and a draft that does not
 * mention it gets this sentence in the customer's language, before its sign-off, so the customer is
 * told whatever the model wrote. Pure.
 */
import type { IncomingEmail } from '../memory/types.ts';
import { CARD_KINDS, CREDENTIAL_KINDS, sensitiveKindsOf } from '../memory/sensitive-note.ts';
import { detectLanguage, type OfflineLanguage } from './offline-text.ts';

const CARD_NOTICE: Record<OfflineLanguage, string> = {
  en: 'For your security, please never send card numbers or security codes by email; we have hidden the card details you sent.',
  de: 'Bitte senden Sie zu Ihrer Sicherheit niemals Kartennummern oder Sicherheitscodes per E-Mail; die gesendeten Kartendaten haben wir unkenntlich gemacht.',
  fr: 'Pour votre sécurité, n’envoyez jamais de numéro de carte ni de code de sécurité par e-mail ; nous avons masqué les données de carte envoyées.',
  es: 'Por su seguridad, no envíe nunca números de tarjeta ni códigos de seguridad por correo electrónico; hemos ocultado los datos de la tarjeta.',
  nl: 'Stuur voor uw veiligheid nooit kaartnummers of beveiligingscodes per e-mail; wij hebben de verstuurde kaartgegevens afgeschermd.',
  sv: 'För din säkerhet: skicka aldrig kortnummer eller säkerhetskoder via e-post; vi har dolt kortuppgifterna du skickade.',
  it: 'Per la sua sicurezza, non invii mai numeri di carta o codici di sicurezza via e-mail; abbiamo oscurato i dati della carta inviati.',
  pt: 'Para sua segurança, nunca envie números de cartão ou códigos de segurança por e-mail; ocultámos os dados do cartão enviados.',
  ru: 'В целях безопасности никогда не отправляйте номера карт и коды безопасности по электронной почте; мы скрыли присланные данные карты.',
  ja: 'セキュリティのため、カード番号やセキュリティコードをメールで送らないでください。お送りいただいたカード情報は伏せました。',
  zh: '为了您的安全，请勿通过电子邮件发送银行卡号或安全码；我们已隐藏您发送的卡信息。',
};

const CREDENTIAL_NOTICE: Record<OfflineLanguage, string> = {
  en: 'For your security, please never share passwords or codes by email, and change the password you sent.',
  de: 'Bitte teilen Sie zu Ihrer Sicherheit niemals Passwörter oder Codes per E-Mail und ändern Sie das gesendete Passwort.',
  fr: 'Pour votre sécurité, ne partagez jamais de mot de passe ni de code par e-mail, et changez le mot de passe envoyé.',
  es: 'Por su seguridad, no comparta nunca contraseñas ni códigos por correo electrónico y cambie la contraseña que envió.',
  nl: 'Deel voor uw veiligheid nooit wachtwoorden of codes per e-mail en wijzig het verstuurde wachtwoord.',
  sv: 'För din säkerhet: dela aldrig lösenord eller koder via e-post, och byt lösenordet du skickade.',
  it: 'Per la sua sicurezza, non condivida mai password o codici via e-mail e cambi la password inviata.',
  pt: 'Para sua segurança, nunca partilhe senhas ou códigos por e-mail e altere a senha que enviou.',
  ru: 'В целях безопасности никогда не отправляйте пароли и коды по электронной почте и смените присланный пароль.',
  ja: 'セキュリティのため、パスワードやコードをメールで共有しないでください。お送りいただいたパスワードは変更してください。',
  zh: '为了您的安全，请勿通过电子邮件分享密码或验证码，并请更改您发送的密码。',
};

// A draft that names the thing and email in one sentence is taken to have told the customer.
const MAIL = /e-?mail|\bmail|correo|e-post|メール|邮件|郵件|почт/iu;
const CARD = /card|karte|carte|tarjeta|cart[ãa]o|carta|kaart|kort|карт|カード|卡/iu;
const CREDENTIAL =
  /password|passwort|mot de passe|contrase[ñn]a|senha|wachtwoord|l[öo]senord|パスワード|密码|пароль|\bcodes?\b|c[óo]digo|codice|koder?|コード|验证码/iu;

function mentions(body: string, thing: RegExp): boolean {
  return body.split(/(?<=[.!?。！？])\s+|\n/u).some((sentence) => thing.test(sentence) && MAIL.test(sentence));
}

/** The notices a reply to these emails must carry and does not yet, in the customer's language. */
export function missingNotices(body: string, emails: readonly Pick<IncomingEmail, 'text' | 'attachmentText'>[]): string[] {
  const kinds = new Set(emails.flatMap((e) => sensitiveKindsOf(e)));
  const language = detectLanguage(emails.at(-1)?.text ?? '');
  const notices: string[] = [];
  if (CARD_KINDS.some((k) => kinds.has(k)) && !mentions(body, CARD)) notices.push(CARD_NOTICE[language]);
  if (CREDENTIAL_KINDS.some((k) => kinds.has(k)) && !mentions(body, CREDENTIAL)) notices.push(CREDENTIAL_NOTICE[language]);
  return notices;
}

/**
 * `body` with the notices it lacks: before its last paragraph when that is a short sign-off
 * ("Best regards,\nAcme"), else at its end.
 */
export function withSensitiveNotice(body: string, emails: readonly Pick<IncomingEmail, 'text' | 'attachmentText'>[]): string {
  const notices = missingNotices(body, emails);
  if (notices.length === 0) return body;
  const paragraphs = body.trimEnd().split(/\n[ \t]*\n/);
  const last = paragraphs.at(-1) ?? '';
  if (paragraphs.length >= 2 && last.split('\n').length <= 3 && last.length <= 120) {
    return [...paragraphs.slice(0, -1), notices.join(' '), last].join('\n\n');
  }
  return `${body.trimEnd()}\n\n${notices.join(' ')}`;
}
