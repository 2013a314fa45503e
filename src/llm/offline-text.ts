/**
 * Text rules of the offline provider (not a model): which language a customer writes, which of
 * their sentences are salutations, sign-offs, questions or a "that worked", which tokens are
 * identifiers worth pinning, and short reply templates in the languages of `fixtures/emails/`.
 * Every pattern is linear-time (no nested quantifiers, bounded repetitions) and the input is cut
 * to `MAX_TEXT_CHARS` first.
 */

/** Characters of one email the rules read. */
const MAX_TEXT_CHARS = 20_000;

export type OfflineLanguage = 'en' | 'de' | 'fr' | 'es' | 'nl' | 'sv' | 'it' | 'pt' | 'ru' | 'ja' | 'zh';

// Frequent short words, enough to tell the Latin-script languages of the fixtures apart.
const WORDS: Array<[OfflineLanguage, Set<string>]> = [
  ['en', new Set('the and you your is are was have has please thanks thank could would my our it this that with for'.split(' '))],
  ['de', new Set('und ich nicht die der das ist mit bitte danke mein meine wir sie ihr ein eine auf für noch habe'.split(' '))],
  ['fr', new Set('je le la les est pas vous merci mon ma une des pour avec nous votre bonjour ne que'.split(' '))],
  ['es', new Set('el la que por gracias mi una los las pedido para con está hola mis pero muy'.split(' '))],
  ['nl', new Set('het een ik niet van mijn bedankt graag is en wij jullie u dank met voor nog'.split(' '))],
  ['sv', new Set('och jag inte det är för tack min att vi ni har med på hej'.split(' '))],
  ['it', new Set('il che non per grazie mio una sono della gli buongiorno ho con'.split(' '))],
  ['pt', new Set('não obrigado obrigada meu uma para com está olá os as pedido você'.split(' '))],
];

/** The customer's language, by script first and then by frequent words (English when unsure). */
export function detectLanguage(text: string): OfflineLanguage {
  const sample = text.slice(0, MAX_TEXT_CHARS);
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(sample)) return 'ja';
  if (/\p{Script=Han}/u.test(sample)) return 'zh';
  if ((sample.match(/\p{Script=Cyrillic}/gu)?.length ?? 0) > 10) return 'ru';
  const words = sample.toLowerCase().match(/\p{L}+/gu) ?? [];
  let best: OfflineLanguage = 'en';
  let bestScore = 0;
  for (const [language, vocabulary] of WORDS) {
    let score = 0;
    for (const word of words) if (vocabulary.has(word)) score++;
    if (score > bestScore) [best, bestScore] = [language, score];
  }
  return best;
}

// JavaScript's \b only knows ASCII letters: these edges work for "für", "заработало", "à".
const B = '(?<![\\p{L}\\p{N}_])';
const E = '(?![\\p{L}\\p{N}_])';
const anyOf = (phrases: readonly string[]): string => `${B}(?:${phrases.join('|')})${E}`;

// A salutation at the start of a line or sentence, with up to four words of name and its comma:
// "Dear Acme Support,", "Hallo zusammen,", "Acme サポート御中", "いつもお世話になっております。".
const SALUTATION_WORDS = [
  'hi',
  'hello',
  'hey',
  'dear',
  'good morning',
  'good afternoon',
  'good evening',
  'greetings',
  'hallo',
  'liebe[rs]?',
  'sehr geehrte[rs]?',
  'guten tag',
  'guten morgen',
  'guten abend',
  'moin',
  'servus',
  'bonjour',
  'bonsoir',
  'salut',
  'madame',
  'monsieur',
  'cher',
  'chère',
  'hola',
  'estimad[oa]s?',
  'buen[oa]s días',
  'buenas tardes',
  'beste',
  'geachte',
  'goedemorgen',
  'goedemiddag',
  'hoi',
  'hej',
  'god morgon',
  'buongiorno',
  'gentile',
  'ciao',
  'olá',
  'prezad[oa]s?',
  'bom dia',
  'здравствуйте',
  'добрый день',
  'добрый вечер',
  'привет',
  'уважаем\\p{L}{0,4}',
];
const SALUTATION = new RegExp(
  `^(?:${anyOf(SALUTATION_WORDS)}(?:[ \\t]+[^\\s,.!?:]{1,30}){0,4}[ \\t]*(?:[,!:]|$)|[^\\n。！？]{0,40}?(?:御中|様|さま|サポート|ご担当者)(?=[、,\\s]|$)[、,]?|(?:いつも)?(?:大変)?お世話になっております[。.]?|お疲れ様です[。.]?|(?:您好|你好|各位好?)[，,！!：:]?)\\s*`,
  'iu',
);

// A line or sentence that only closes the email: "Thanks!", "Best regards, Alice", "Mit freundlichen Grüßen".
const SIGN_OFF_WORDS = [
  'thanks',
  'thank you',
  'many thanks',
  'cheers',
  'best',
  'best regards',
  'kind regards',
  'regards',
  'warm regards',
  'sincerely',
  'yours',
  'mit freundlichen grüßen',
  'freundliche grüße',
  'viele grüße',
  'beste grüße',
  'lg',
  'danke',
  'vielen dank',
  'cordialement',
  'bien à vous',
  'merci',
  'bonne journée',
  'saludos',
  'un saludo',
  'gracias',
  'atentamente',
  'met vriendelijke groet(?:en)?',
  'groeten',
  'groetjes',
  'bedankt',
  'alvast bedankt',
  'med vänliga hälsningar',
  'vänliga hälsningar',
  'tack',
  'gruß',
  'groet',
  'cordiali saluti',
  'grazie',
  'distinti saluti',
  'atenciosamente',
  'obrigad[oa]',
  'с уважением',
  'спасибо',
  'заранее спасибо',
  'sent from my',
  'envoyé de mon',
  'von meinem',
];
const SIGN_OFF = new RegExp(
  `^(?:${anyOf(SIGN_OFF_WORDS)}[^.!?。！？\\n]{0,60}[.!?。！？]?|(?:以上、?)?(?:引き続き|今後とも)?(?:何卒)?(?:よろしく|宜しく)お願い(?:いた|致)?します[。.]?|(?:ご対応|ご連絡|ご回答)?(?:いただき)?ありがとうございま(?:す|した)[。.!！]?|谢谢[。！!]?|多谢[。！!]?|此致(?:敬礼)?)$`,
  'iu',
);

// A question or a request, in the fixtures' languages.
const REQUEST = new RegExp(
  `[?？]|${anyOf([
    'please',
    'could you',
    'can you',
    'would you',
    'need (?:you|help|to know)',
    'how do i',
    'how can i',
    "i'd like",
    'i would like',
    'bitte',
    'können sie',
    'könnten sie',
    'ich möchte',
    'ich brauche',
    'wie kann',
    'pourriez-vous',
    'pouvez-vous',
    'merci de',
    'je voudrais',
    'je souhaite',
    "s'il vous plaît",
    'podrían',
    'pueden',
    'podéis',
    'por favor',
    'quisiera',
    'me gustaría',
    'necesito',
    'kunt u',
    'kun je',
    'zou u',
    'ik wil',
    'ik zou graag',
    'kan ni',
    'skulle ni',
    'vill',
    'potete',
    'potreste',
    'vorrei',
    'podem',
    'poderiam',
    'gostaria',
    'пожалуйста',
    'не могли бы',
    'можете',
    'прошу',
  ])}|ください|お願い(?:いた|致)?します|でしょうか|いただけ|请|麻烦|吗`,
  'iu',
);

// "Please only call me in the evenings" is a preference for the profile, not an open item.
const PREFERENCE = /\b(?:call|phone|ring|contact|reach|email|e-mail|write to|reply to|answer) me\b|\bI prefer\b/i;

// The customer declares the matter settled.
const SETTLED = new RegExp(
  `${anyOf([
    'that (?:fixed|solved|did|worked)(?: it)?',
    '(?:it|everything|this) (?:works|worked|is working)(?: now| fine| again)?',
    'works (?:fine )?now',
    'problem (?:is )?solved',
    'issue (?:is )?(?:resolved|fixed)',
    'all (?:good|sorted|set)(?: now)?',
    'you can close',
    '(?:the new |the )?link worked',
    "i'm (?:back )?in",
    'est bien arrivée?',
    'feel free to close',
    'please close (?:this|the)',
    'no further (?:help|action)',
    'no longer needed',
    'das hat (?:funktioniert|geklappt)',
    'funktioniert (?:jetzt|wieder)',
    'hat sich erledigt',
    'ist erledigt',
    'problem (?:ist )?gelöst',
    'können (?:das|den fall|das ticket) schließen',
    'ça (?:a )?(?:marché|fonctionné)',
    'cela a fonctionné',
    'ça (?:marche|fonctionne) (?:maintenant|à nouveau)',
    'problème (?:est )?résolu',
    "c'est réglé",
    'vous pouvez (?:fermer|clôturer)',
    'funcionó',
    'ya funciona',
    'problema resuelto',
    'está resuelto',
    'pueden cerrar',
    'podéis cerrar',
    'het werkt (?:nu|weer)',
    'dat werkte',
    'is opgelost',
    'mag (?:gesloten|dicht)',
    'kunt (?:dit|het) sluiten',
    'det fungerar (?:nu|igen)',
    'det är löst',
    'ni kan stänga',
    'ha funzionato',
    'risolto',
    'potete chiudere',
    'funcionou',
    'resolvido',
    'podem fechar',
    'заработало',
    'всё работает',
    'все работает',
    'проблема решена',
    'можно закрывать',
    'можно закрыть',
  ])}|問題(?:ございません|ありません)(?!か)|解決しました|解決いたしました|直りました|クローズして(?:ください|いただいて)|閉じていただいて|已解决|解决了|可以关闭|可以关掉`,
  'iu',
);

// Said in the same sentence, these turn "resolved" into "not resolved" ("it still doesn't work").
const NEGATION = new RegExp(
  `${anyOf(['not', "isn't", "hasn't", "didn't", "doesn't", 'still', 'nicht', 'noch', 'pas', 'todavía', 'aún', 'niet', 'nog', 'inte', 'non', 'ainda', 'не', 'ещё', 'еще'])}|まだ|未|还没|没有|仍然`,
  'iu',
);

/** True when the line only closes the email ("Best regards,", "Mit freundlichen Grüßen", "よろしくお願いいたします。"). */
export function isSignOff(line: string): boolean {
  return SIGN_OFF.test(line.trim());
}

/** The email's content sentences: salutations, sign-offs and signature lines left out. */
export function contentSentences(text: string): string[] {
  const lines = text
    .slice(0, MAX_TEXT_CHARS)
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  // A sign-off line followed by at most four short lines (a name, a title, a phone) ends the email.
  let end = lines.length;
  for (let i = lines.length - 1; i >= 0 && i >= lines.length - 5; i--) {
    if (lines.slice(i + 1).some((l) => l.length > 60)) break;
    if (SIGN_OFF.test(lines[i]!)) end = i;
  }
  return (
    lines
      .slice(0, end)
      .map((l) => l.replace(SALUTATION, ''))
      .join(' ')
      .replace(/\s+/g, ' ')
      .split(/(?<=[.!?])\s+|(?<=[。！？])/)
      .map((s) => s.replace(SALUTATION, '').trim())
      // A question stays, even one that starts with "Thanks, ...".
      .filter((s) => s.length > 1 && /[\p{L}\p{N}]/u.test(s) && !(SIGN_OFF.test(s) && !/[?？]/.test(s)))
  );
}

/** The customer's questions and requests among the content sentences (preferences excepted). */
export function requestsIn(sentences: readonly string[]): string[] {
  return sentences.filter((s) => REQUEST.test(s) && !PREFERENCE.test(s));
}

/**
 * True when the email declares the matter settled ("that worked", "you can close this"), never
 * negates it, and asks for nothing new ("that works for now; could you tell us when..." is open).
 */
export function declaresSettled(text: string): boolean {
  if (requestsIn(contentSentences(text)).some((s) => !SETTLED.test(s))) return false;
  const settling = text
    .slice(0, MAX_TEXT_CHARS)
    .split(/(?<=[.!?,;])\s+|(?<=[。！？、])|\n/)
    .filter((s) => SETTLED.test(s));
  return settling.length > 0 && settling.every((s) => !NEGATION.test(s.replace(SETTLED, ' ')));
}

// Identifiers: "#1234", prefixed numbers ("INV-5120", "ORD12345", "CN2024-889"), error codes
// ("E1234", "ERR_SSL_PROTOCOL", "0x80070005"), e-mail-like and URL-like tokens. Bounded.
const IDENTIFIER =
  /https?:\/\/[^\s<>"'()]{3,200}|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,5}|#\d{2,12}\b|\b[A-Z]{1,6}[-_]?\d{3,12}(?:-\d{1,12})?\b|\b(?:ERR|E)_[A-Z0-9_]{3,40}\b|\b0x[0-9A-Fa-f]{4,16}\b/g;

/** Identifiers the text names, in order, without duplicates, at most `max`. */
export function identifiersIn(text: string, max: number, exclude: readonly string[] = []): string[] {
  const skip = new Set(exclude.map((e) => e.toLowerCase()));
  const found: string[] = [];
  for (const match of text.slice(0, MAX_TEXT_CHARS).matchAll(IDENTIFIER)) {
    const token = match[0].replace(/[.,;:!?]+$/, '');
    if (skip.has(token.toLowerCase()) || found.some((f) => f.toLowerCase() === token.toLowerCase())) continue;
    found.push(token);
    if (found.length >= max) break;
  }
  return found;
}

interface Template {
  hello: (name: string | null) => string;
  received: string;
  settled: string;
  tracking: string;
  human: string;
  regards: string;
  /** Before lines quoted from the help center (the passage itself stays as the team wrote it). */
  helpCenter: string;
  /** After them. */
  notAnswered: string;
}

// Short reply templates (a rule-based fallback, not translation).
const TEMPLATES: Record<OfflineLanguage, Template> = {
  en: {
    hello: (n) => (n ? `Hello ${n},` : 'Hello,'),
    received: 'Thank you for your email. We have received it and will get back to you shortly.',
    settled:
      "Thank you for letting us know. We're glad it is sorted, and we will close this request. Just reply if anything else comes up.",
    tracking: 'We are tracking:',
    human: 'A member of our team will follow up on this personally.',
    regards: 'Best regards,',
    helpCenter: 'Thank you for your email. This is what our help center says about it:',
    notAnswered: 'If that does not answer your question, just reply and a colleague will help.',
  },
  de: {
    hello: (n) => (n ? `Hallo ${n},` : 'Guten Tag,'),
    received: 'vielen Dank für Ihre Nachricht. Wir haben sie erhalten und melden uns in Kürze.',
    settled:
      'vielen Dank für die Rückmeldung. Schön, dass es jetzt klappt; wir schließen die Anfrage. Antworten Sie einfach, falls noch etwas ist.',
    tracking: 'Offen bei uns:',
    human: 'Eine Kollegin oder ein Kollege meldet sich persönlich dazu.',
    regards: 'Mit freundlichen Grüßen',
    helpCenter: 'vielen Dank für Ihre Nachricht. Dazu steht in unserem Hilfe-Center:',
    notAnswered: 'Falls das Ihre Frage nicht beantwortet, antworten Sie einfach; eine Kollegin oder ein Kollege hilft Ihnen weiter.',
  },
  fr: {
    hello: (n) => (n ? `Bonjour ${n},` : 'Bonjour,'),
    received: 'Merci pour votre message. Nous l’avons bien reçu et revenons vers vous rapidement.',
    settled: 'Merci de nous avoir prévenus. Nous sommes ravis que ce soit réglé et clôturons la demande. Répondez simplement si besoin.',
    tracking: 'Nous suivons :',
    human: 'Un membre de notre équipe reviendra personnellement vers vous.',
    regards: 'Cordialement,',
    helpCenter: 'Merci pour votre message. Voici ce qu’indique notre centre d’aide à ce sujet :',
    notAnswered: 'Si cela ne répond pas à votre question, répondez simplement et un collègue vous aidera.',
  },
  es: {
    hello: (n) => (n ? `Hola ${n}:` : 'Hola:'),
    received: 'Gracias por su mensaje. Lo hemos recibido y le responderemos en breve.',
    settled: 'Gracias por avisarnos. Nos alegra que esté resuelto; cerramos la solicitud. Responda si necesita algo más.',
    tracking: 'Tenemos pendiente:',
    human: 'Una persona de nuestro equipo se pondrá en contacto personalmente.',
    regards: 'Saludos cordiales,',
    helpCenter: 'Gracias por su mensaje. Esto es lo que indica nuestro centro de ayuda:',
    notAnswered: 'Si esto no responde a su pregunta, responda a este correo y un compañero le ayudará.',
  },
  nl: {
    hello: (n) => (n ? `Hallo ${n},` : 'Hallo,'),
    received: 'Bedankt voor uw bericht. We hebben het ontvangen en komen er snel op terug.',
    settled: 'Bedankt voor het laten weten. Fijn dat het is opgelost; we sluiten de aanvraag. Reageer gerust als er nog iets is.',
    tracking: 'Wij volgen op:',
    human: 'Een collega neemt persoonlijk contact met u op.',
    regards: 'Met vriendelijke groet,',
    helpCenter: 'Bedankt voor uw bericht. Dit staat er in ons helpcentrum over:',
    notAnswered: 'Beantwoordt dit uw vraag niet? Reageer gerust, dan helpt een collega u verder.',
  },
  sv: {
    hello: (n) => (n ? `Hej ${n},` : 'Hej,'),
    received: 'Tack för ditt mejl. Vi har tagit emot det och återkommer snart.',
    settled: 'Tack för att du hör av dig. Skönt att det är löst; vi stänger ärendet. Svara bara om något mer dyker upp.',
    tracking: 'Vi följer upp:',
    human: 'En kollega hör av sig personligen.',
    regards: 'Vänliga hälsningar,',
    helpCenter: 'Tack för ditt mejl. Så här står det i vårt hjälpcenter:',
    notAnswered: 'Om det inte besvarar din fråga, svara bara så hjälper en kollega dig.',
  },
  it: {
    hello: (n) => (n ? `Buongiorno ${n},` : 'Buongiorno,'),
    received: 'Grazie per il messaggio. Lo abbiamo ricevuto e la ricontatteremo a breve.',
    settled: 'Grazie per averci avvisato. Siamo lieti che sia risolto e chiudiamo la richiesta. Risponda pure se serve altro.',
    tracking: 'Stiamo seguendo:',
    human: 'Un collega la contatterà personalmente.',
    regards: 'Cordiali saluti,',
    helpCenter: 'Grazie per il messaggio. Ecco cosa dice il nostro centro assistenza:',
    notAnswered: 'Se questo non risponde alla sua domanda, risponda pure e un collega la aiuterà.',
  },
  pt: {
    hello: (n) => (n ? `Olá ${n},` : 'Olá,'),
    received: 'Obrigado pela sua mensagem. Recebemos e voltaremos a contactar em breve.',
    settled:
      'Obrigado por nos avisar. Ficamos contentes que esteja resolvido e encerramos o pedido. Responda se precisar de mais alguma coisa.',
    tracking: 'Estamos a acompanhar:',
    human: 'Um colega da nossa equipa entrará em contacto pessoalmente.',
    regards: 'Atenciosamente,',
    helpCenter: 'Obrigado pela sua mensagem. Eis o que diz o nosso centro de ajuda:',
    notAnswered: 'Se isto não responder à sua pergunta, basta responder e um colega ajudará.',
  },
  ru: {
    hello: (n) => (n ? `Здравствуйте, ${n}!` : 'Здравствуйте!'),
    received: 'Спасибо за письмо. Мы его получили и скоро ответим.',
    settled: 'Спасибо, что сообщили. Рады, что всё решилось; мы закрываем обращение. Если понадобится что-то ещё, просто ответьте.',
    tracking: 'Мы отслеживаем:',
    human: 'Наш сотрудник свяжется с вами лично.',
    regards: 'С уважением,',
    helpCenter: 'Спасибо за письмо. Вот что говорится об этом в нашем справочном центре:',
    notAnswered: 'Если это не отвечает на ваш вопрос, просто ответьте, и наш сотрудник поможет.',
  },
  ja: {
    hello: (n) => (n ? `${n} 様` : 'お客様'),
    received: 'お問い合わせいただきありがとうございます。内容を確認のうえ、追ってご連絡いたします。',
    settled:
      'ご連絡ありがとうございます。解決したとのこと、安心いたしました。本件はクローズいたします。ほかにございましたらご返信ください。',
    tracking: '対応中の事項:',
    human: '担当者より改めてご連絡いたします。',
    regards: 'よろしくお願いいたします。',
    helpCenter: 'お問い合わせいただきありがとうございます。ヘルプセンターには次のように記載されています。',
    notAnswered: 'ご不明な点が解消しない場合は、このメールにご返信ください。担当者がお手伝いいたします。',
  },
  zh: {
    hello: (n) => (n ? `${n}，您好：` : '您好：'),
    received: '感谢您的来信。我们已收到，会尽快回复您。',
    settled: '感谢告知。很高兴问题已经解决，我们将关闭此请求。如有其他问题，请直接回复。',
    tracking: '我们正在跟进：',
    human: '我们的同事会亲自跟进此事。',
    regards: '此致',
    helpCenter: '感谢您的来信。我们的帮助中心对此的说明如下：',
    notAnswered: '如果这没有解答您的问题，请直接回复，我们的同事会帮助您。',
  },
};

/** The offline reply in the customer's language: a greeting, one line of substance, the list, the signature. */
export function offlineReply(input: {
  language: OfflineLanguage;
  name: string | null;
  settled: boolean;
  openItems: readonly string[];
  needsHuman: boolean;
  supportName: string;
  /** Lines quoted from a knowledge passage that answers the question (as the team wrote them; the lines around them in the customer's language). */
  answer?: readonly string[] | null;
}): string {
  const t = TEMPLATES[input.language];
  const answer = input.settled ? null : (input.answer ?? null);
  return [
    t.hello(input.name),
    '',
    input.settled ? t.settled : answer ? t.helpCenter : t.received,
    ...(answer ? ['', ...answer, '', t.notAnswered] : []),
    ...(input.openItems.length > 0 && !input.settled && !answer ? ['', t.tracking, ...input.openItems.map((i) => `- ${i}`)] : []),
    ...(input.needsHuman ? ['', t.human] : []),
    '',
    t.regards,
    input.supportName,
  ].join('\n');
}
