/**
 * The wording of automated notices, as data: subjects of delivery status notifications, list
 * managers and feedback loops in the languages their senders localise them into, phrases of their
 * bodies, and the sender spellings of mailer daemons and postmasters. Learned from how MTAs,
 * providers and list managers write them (Postfix, Exim, Sendmail, qmail, Courier, OpenSMTPD,
 * Exchange and Exchange Online in their UI languages, Lotus Domino, Gmail, Yahoo, mail providers
 * in Germany, France, Russia, China and Japan, Mailman, Sympa, LISTSERV, Majordomo, fml, Google
 * Groups, feedback loops). Pure data; `bounce.ts` decides how much each one counts.
 */

/** What a piece of wording says about the mail. */
export type Flavour = 'bounce' | 'delay' | 'success' | 'complaint' | 'list-reject' | 'list-held';

export interface SubjectPattern {
  /** Tested against the trimmed, lower-cased subject; always anchored at the start. */
  pattern: RegExp;
  flavour: Flavour;
}

// Localised Exchange NDR prefixes carry a colon (ASCII or full-width); without it the same words are
// a person's subject ("Unzustellbar - Paket 3391"), so the colon is part of the pattern.
const C = '\\s*[:：]';

const prefix = (words: string, flavour: Flavour, colon = true): SubjectPattern => ({
  pattern: new RegExp(`^(?:${words})${colon ? C : '(?:$|[\\s:：.,(-])'}`, 'u'),
  flavour,
});

export const SUBJECT_PATTERNS: readonly SubjectPattern[] = [
  // Exchange / Outlook / Exchange Online in its UI languages.
  prefix(
    [
      'undeliverable',
      'unzustellbar',
      'non remis',
      'non_remis_',
      'no se puede entregar',
      'onbestelbaar',
      'olevererbart',
      'nie można dostarczyć',
      'не доставлено',
      '配信不能',
      '无法投递',
      '無法傳遞',
      'non recapitabile',
      'não é possível entregar',
      'nedoručitelné',
      'kan ikke leveres',
      'ei voitu toimittaa',
      'teslim edilemiyor',
      '배달되지 않음',
      'kézbesíthetetlen',
      'δεν είναι δυνατή η παράδοση',
      'nepodarilo sa doručiť',
      'nedostavljivo',
      'nu se poate livra',
    ].join('|'),
    'bounce',
  ),
  // Unix MTAs and big providers.
  prefix(
    'undelivered mail returned to sender|undelivered mail|undeliverable mail|undeliverable message|mail delivery failed',
    'bounce',
    false,
  ),
  prefix('delivery status notification \\((?:failure|failed)\\)|delivery status notification: (?:error|failed)', 'bounce', false),
  prefix('delivery status notification \\(delay\\)|delayed mail|warning: could not send message|delivery delayed', 'delay', false),
  prefix('delivery status notification \\((?:success|relay)\\)|successful mail delivery report', 'success', false),
  { pattern: /^delivery status notification$/u, flavour: 'bounce' },
  prefix('returned mail', 'bounce'),
  { pattern: /^failure notice$/u, flavour: 'bounce' },
  prefix('delivery failure|delivery notification|permanent delivery failure|message delivery failure', 'bounce', false),
  prefix(
    'notice: mail delivery status|mail system error - returned mail|mail failure\\.?$|message status - undeliverable',
    'bounce',
    false,
  ),
  prefix('nachricht konnte nicht zugestellt werden|sms konnte nicht zugestellt werden|unzustellbare nachricht', 'bounce', false),
  prefix('message non remis|échec de remise|echec de remise|mensaje no entregado|messaggio non recapitato', 'bounce', false),
  // Chinese and Russian providers.
  { pattern: new RegExp(`^(?:系统退信|退信通知)$|^退信${C}`, 'u'), flavour: 'bounce' },
  { pattern: /^недоставленное сообщение$/u, flavour: 'bounce' },
  // Japanese carriers and providers ("mail error notice", "delivery error"), Apache James, InterScan.
  prefix('メールエラー通知|エラーメール通知|メール配信エラー|配信エラー通知|送信エラー通知|配送エラー', 'bounce', false),
  { pattern: /^\[bounce\]$/u, flavour: 'bounce' },
  prefix('mail could not be delivered|message could not be delivered|undelivered message', 'bounce', false),
  // List managers.
  { pattern: /^your message to .{1,160} awaits moderator approval/u, flavour: 'list-held' },
  { pattern: /^ihre nachricht an .{1,160} wartet auf freigabe/u, flavour: 'list-held' },
  { pattern: /^su mensaje a .{1,160} espera la aprobación/u, flavour: 'list-held' },
  { pattern: /^votre message pour .{1,160} (?:est en attente|attend)/u, flavour: 'list-held' },
  { pattern: /^your message to .{1,160} was rejected/u, flavour: 'list-reject' },
  { pattern: /^message not delivered: you are not a member/u, flavour: 'list-reject' },
  { pattern: new RegExp(`^(?:message rejeté|message rejected|nachricht abgelehnt)${C}`, 'u'), flavour: 'list-reject' },
  { pattern: /^bounce \S{1,200}: non-member submission/u, flavour: 'list-reject' },
  { pattern: new RegExp(`^loop alert${C}`, 'u'), flavour: 'list-reject' },
  { pattern: /^message \("/u, flavour: 'list-reject' },
  // fml's notices.
  prefix('not member article from|reject mail from|fml system error message|warning: unix from loop', 'list-reject', false),
  { pattern: new RegExp(`^loop back warning${C}`, 'u'), flavour: 'list-reject' },
  { pattern: /^you are not member|\bare not members?\b.{0,80}$/u, flavour: 'list-reject' },
  // Feedback loops.
  { pattern: /^(?:complaint about message from|email feedback report|abuse report for|fbl report)/u, flavour: 'complaint' },
  { pattern: /^(?:жалоба на спам|signalement de courrier indésirable|beschwerde über ihre e-mail)/u, flavour: 'complaint' },
];

export interface BodyPhrase {
  /** Lower-case text searched for in the message's own (unquoted, unforwarded) text. */
  text: string;
  flavour: Flavour;
}

const phrases = (flavour: Flavour, ...texts: string[]): BodyPhrase[] => texts.map((text) => ({ text, flavour }));

export const BODY_PHRASES: readonly BodyPhrase[] = [
  ...phrases(
    'bounce',
    // English MTA and provider wording.
    'could not be delivered to one or more',
    'your message could not be delivered',
    'message could not be delivered',
    "wasn't able to deliver your message",
    'was not able to deliver your message',
    'unable to deliver your message',
    'delivery to the following recipient failed',
    'delivery to the following recipients failed',
    'delivery has failed to these recipients',
    'did not reach some or all of the intended recipients',
    'the following addresses had permanent fatal errors',
    'this is the mail system at host',
    'this is the qmail-send program',
    'a message that you sent could not be delivered',
    'created automatically by mail delivery software',
    'error has occurred while attempting to deliver a message',
    'diagnostic information for administrators',
    "your message wasn't delivered",
    "couldn't be delivered",
    'was not delivered to:',
    'permanent fatal delivery errors',
    'we were unable to deliver a message',
    'could not be delivered to the recipient',
    'could not be delivered to mobile',
    'undeliverable mail',
    // Carrier and gateway notices (au/KDDI, Verizon, InterScan, Apache James).
    'could not be delivered to: <',
    'as their mailbox is full',
    'as the remote domain doesnt exist',
    'due to the following smtp relay error',
    'requested action not taken: no such user here',
    'no valid recipients for this',
    'unable to deliver message to <',
    'the following message could not be delivered',
    // German, French, Spanish, Italian, Dutch, Swedish, Polish, Portuguese, Czech, Danish, Finnish, Turkish, Korean, Hungarian.
    'konnte nicht zugestellt werden',
    'nicht übermittelt werden',
    'diagnoseinformationen für administratoren',
    'hat einige oder alle empfänger nicht erreicht',
    'automatisch vom mailsystem erzeugt',
    'nicht als sms zugestellt',
    "n'a pas pu être remis",
    "n'a pas pu etre remis",
    'informations de diagnostic pour les administrateurs',
    'no se pudo entregar el mensaje',
    'no se ha podido entregar el mensaje',
    'información de diagnóstico para administradores',
    'impossibile recapitare il messaggio',
    'non è stato possibile recapitare',
    'kan niet worden bezorgd',
    'diagnostische gegevens voor beheerders',
    'det gick inte att leverera meddelandet',
    'diagnostisk information för administratörer',
    'nie można dostarczyć wiadomości',
    'não foi possível entregar a mensagem',
    'nelze doručit',
    'kunne ikke leveres',
    'ei voitu toimittaa',
    'teslim edilemedi',
    '배달하지 못했습니다',
    'nem sikerült kézbesíteni',
    // Russian, Japanese, Chinese.
    'не удалось доставить сообщение',
    'не может быть доставлено',
    'сообщение не удалось доставить',
    'письмо не может быть доставлено',
    '配信できませんでした',
    '届きませんでした',
    '未能成功送达',
    '邮件被退回',
    '无法将邮件传递',
    '未能投递成功',
    '退信原因',
    '宛先不明',
    'メールアドレスが見つかりません',
    'メールアドレスは存在しません',
    'メールアドレスが存在しません',
    'メールを配信できません',
    'メールを配送できません',
    '相手先に届きませんでした',
    '無法將郵件傳遞',
  ),
  ...phrases(
    'delay',
    'message not delivered yet',
    'there was a temporary problem delivering your message',
    'could not be delivered for more than',
    'message still undelivered after',
    'this is a warning message only',
    'this is a warning only',
    'will be retried until',
  ),
  ...phrases('success', 'was successfully delivered to the destination', 'successfully delivered to the destination'),
  ...phrases(
    'list-reject',
    'not from a list member',
    'you are not a member of',
    'non-member submission',
    'you are not authorized to send mail to',
    'you  are not authorized to send mail to',
    'may not have permission to post messages to the group',
    'not allowed to post to',
    "vous n'êtes pas abonné",
    'nicht mitglied der liste',
    'no es miembro de la lista',
    'seems to have looped back',
    'duplicated message-id',
    'has detected a loop condition',
    'not member article from',
    'reject mail from',
    'mail seems looped',
    'ループしている可能性',
  ),
  ...phrases(
    'list-held',
    'held until the list moderator',
    'awaits moderator approval',
    'bis der moderator sie überprüft hat',
    'retenido hasta que el moderador',
    'en attente de modération',
  ),
  ...phrases(
    'complaint',
    'this is an email abuse report',
    'marked the attached message as spam',
    'reported the attached message as spam',
    'this is an authentication failure report',
    'als spam markiert',
    'пометил письмо как спам',
    'comme frauduleux',
  ),
];

/** Local parts (lower-cased, with `-`, `_` and `.` removed) that only ever belong to mail software. */
export const DAEMON_LOCAL_PARTS: ReadonlySet<string> = new Set(['mailerdaemon', 'maildaemon', 'mdaemon', 'mailerdeamon']);

/** Role local parts that people use too (a small company's admin writes from postmaster@): one signal, never alone. */
export const DELIVERY_ROLE_LOCAL_PARTS: ReadonlySet<string> = new Set(['postmaster', 'bounce', 'bounces', 'mailerror', 'mailererror']);
export const LIST_ROLE_LOCAL_PARTS: ReadonlySet<string> = new Set([
  'listserv',
  'majordomo',
  'sympa',
  'mailman',
  'listproc',
  'lyris',
  'ecartis',
]);
export const ABUSE_ROLE_LOCAL_PARTS: ReadonlySet<string> = new Set(['abuse', 'fbl', 'feedbackloop', 'scomp', 'arf', 'spamreport']);

/** Display names MTAs and providers give their notices; compared whole (lower-cased). */
export const DELIVERY_DISPLAY_NAMES: ReadonlySet<string> = new Set([
  'mail delivery system',
  'mail delivery subsystem',
  'mail delivery service',
  'mailer daemon',
  'mailer-daemon',
  'microsoft outlook',
  'system administrator',
  'postmaster',
  'mail administrator',
  'mail server',
]);

/**
 * Lines that start a forwarded or quoted message in a person's mail. Wording after one of them is
 * what someone forwarded, not what this mail is. Matched against the trimmed, lower-cased line.
 */
export const FORWARD_MARKERS: readonly RegExp[] = [
  /^-{2,}\s*(?:forwarded message|original message|mensagem encaminhada|message transféré|weitergeleitete nachricht|messaggio inoltrato|mensaje reenviado|doorgestuurd bericht|пересылаемое сообщение|ursprüngliche nachricht|message d'origine|mensaje original|原始邮件|转发的邮件|転送されたメッセージ)/u,
  /^(?:begin forwarded message|anfang der weitergeleiteten nachricht|début du message réexpédié)\s*:/u,
  /^_{20,}$/u,
];
