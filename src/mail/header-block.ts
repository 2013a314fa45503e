// Recognises the header block that mail clients write above quoted or forwarded history
// ("From: / Sent: / To: / Subject:" in Outlook, "Gesendet: / Von: / An: / Betreff:" in GMX,
// "发件人: / 发送时间: / 收件人: / 主题:" in QQ Mail, tab-separated "From:\t…" in Lotus Notes …) and the
// "-----Original Message-----" / "---------- Forwarded message ---------" separator lines, in the
// languages of the tables below. Pure; every function looks at a bounded number of short lines.

/** The four kinds of field a quoted header block is made of. */
export type HeaderFieldKind = 'from' | 'date' | 'to' | 'subject';

// Field names as the clients print them, per kind. Lower-case; one space between words.
const FIELD_NAMES: Record<HeaderFieldKind, string[]> = {
  from: [
    'from',
    'von',
    'de',
    'de la',
    'expéditeur',
    'van',
    'afzender',
    'da',
    'mittente',
    'remitente',
    'remetente',
    'från',
    'avsändare',
    'fra',
    'avsender',
    'afsender',
    'lähettäjä',
    'od',
    'nadawca',
    'odesílatel',
    'odosielateľ',
    'feladó',
    'kimden',
    'gönderen',
    'από',
    'αποστολέας',
    'от',
    'отправитель',
    'від',
    'відправник',
    'từ',
    'người gửi',
    'dari',
    'pengirim',
    'מאת',
    'שולח',
    'من',
    'المرسل',
    'प्रेषक',
    'जिससे',
    'จาก',
    'ผู้ส่ง',
    '发件人',
    '寄件者',
    '寄件人',
    '差出人',
    '보낸 사람',
    '보낸사람',
    'от кого',
    'nuo',
    'saatja',
    'od koga',
    'од',
  ],
  date: [
    'sent',
    'date',
    'gesendet',
    'datum',
    'envoyé',
    'envoyé le',
    'enviado',
    'enviado el',
    'enviado em',
    'enviada',
    'enviada em',
    'fecha',
    'data',
    'inviato',
    'verzonden',
    'skickat',
    'sendt',
    'lähetetty',
    'päivämäärä',
    'wysłano',
    'wysłane',
    'data wysłania',
    'odesláno',
    'odoslané',
    'elküldve',
    'dátum',
    'küldve',
    'trimis',
    'gönderildi',
    'gönderilme tarihi',
    'tarih',
    'στάλθηκε',
    'ημερομηνία',
    'отправлено',
    'дата',
    'надіслано',
    'đã gửi',
    'ngày',
    'ngày gửi',
    'dikirim',
    'tanggal',
    'נשלח',
    'תאריך',
    'تم الإرسال',
    'التاريخ',
    'भेजा गया',
    'दिनांक',
    'ส่ง',
    'วันที่',
    'วันที่ส่ง',
    '发送时间',
    '时间',
    '日期',
    '寄件日期',
    '傳送時間',
    '发送日期',
    '送信日時',
    '日付',
    '보낸 날짜',
    '날짜',
    'išsiųsta',
    'nosūtīts',
    'saadetud',
    'poslano',
    'изпратено',
  ],
  to: [
    'to',
    'cc',
    'bcc',
    'reply to',
    'reply-to',
    'an',
    'kopie',
    'antwort an',
    'à',
    'a',
    'copie à',
    'répondre à',
    'destinataire',
    'para',
    'responder a',
    'aan',
    'beantwoorden - aan',
    'till',
    'kopia',
    'til',
    'kopi',
    'vastaanottaja',
    'kopio',
    'do',
    'dw',
    'komu',
    'kópia',
    'címzett',
    'másolat',
    'másolatot kap',
    'către',
    'kime',
    'bilgi',
    'προς',
    'κοιν',
    'кому',
    'копия',
    'копія',
    'đến',
    'kepada',
    'tembusan',
    'אל',
    'עותק',
    'إلى',
    'نسخة',
    'प्रति',
    'ถึง',
    'สำเนา',
    '收件人',
    '抄送',
    '收件者',
    '副本',
    '宛先',
    '받는 사람',
    '받는사람',
    '참조',
    'kam',
    'адресат',
  ],
  subject: [
    'subject',
    'betreff',
    'objet',
    'asunto',
    'assunto',
    'oggetto',
    'onderwerp',
    'ämne',
    'emne',
    'aihe',
    'temat',
    'předmět',
    'predmet',
    'tárgy',
    'subiect',
    'konu',
    'θέμα',
    'тема',
    'chủ đề',
    'tiêu đề',
    'perihal',
    'subjek',
    'נושא',
    'الموضوع',
    'विषय',
    'เรื่อง',
    '主题',
    '主旨',
    '件名',
    '제목',
    'tema',
    'teema',
  ],
};

const FIELD_KIND = new Map<string, HeaderFieldKind>();
for (const [kind, names] of Object.entries(FIELD_NAMES) as Array<[HeaderFieldKind, string[]]>) {
  for (const name of names) if (!FIELD_KIND.has(name)) FIELD_KIND.set(name, kind);
}

const MAX_FIELD_LINE = 400;
const MAX_KEY_LENGTH = 30;

/** A "Key: value" line of a quoted header block: its kind and value, or null. */
function headerField(line: string): { kind: HeaderFieldKind; value: string } | null {
  const trimmed = line.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_FIELD_LINE) return null;
  const colon = firstColon(trimmed);
  if (colon <= 0 || colon > MAX_KEY_LENGTH + 4) return null;
  // Gmail renders Outlook's bold keys as "*From:*"; some clients indent keys.
  const key = trimmed
    .slice(0, colon)
    .replace(/^\*+|\*+$/g, '')
    .trim()
    .replace(/\s+/g, ' ')
    .toLowerCase();
  const kind = FIELD_KIND.get(key);
  if (!kind) return null;
  const value = trimmed
    .slice(colon + 1)
    .replace(/^\*+/, '')
    .trim();
  return { kind, value };
}

function firstColon(text: string): number {
  const limit = Math.min(text.length, MAX_KEY_LENGTH + 5);
  for (let i = 0; i < limit; i++) {
    const ch = text[i];
    if (ch === ':' || ch === '：') return i;
  }
  return -1;
}

const HEADER_BLOCK_WINDOW = 10;
const MAX_CONTINUATION_LINES = 2;

/** Extent and content of a header block found by {@link headerBlockAt}. */
export interface HeaderBlock {
  /** Number of lines from the start to the last field line (inclusive). */
  length: number;
  subject: string | null;
}

/**
 * A quoted header block starting at line `start`: consecutive field lines (a wrapped To/Cc list
 * may add up to two continuation lines, single blank lines between fields are allowed) with a From field, at least three different kinds of
 * field, and a Subject or an e-mail address. The last two conditions keep a customer's
 * "From: Berlin / To: Paris / Date: 4 May" itinerary out.
 */
export function headerBlockAt(lines: readonly string[], start: number): HeaderBlock | null {
  const webmail = webmailOpening(lines[start] ?? '');
  const first = webmail ?? headerField(lines[start] ?? '');
  if (!first) return null;
  const kinds = new Set<HeaderFieldKind>(webmail ? webmail.kinds : [first.kind]);
  let subject: string | null = first.kind === 'subject' ? first.value : null;
  let hasAddress = first.value.includes('@');
  let last = start;
  let continuation = 0;
  const stop = Math.min(lines.length, start + HEADER_BLOCK_WINDOW);
  for (let j = start + 1; j < stop; j++) {
    const line = lines[j] ?? '';
    if (line.trim() === '') {
      // Outlook's HTML, rendered as text, can put a blank line between the fields.
      if (headerField(lines[j + 1] ?? '') === null) break;
      continue;
    }
    const field = headerField(line);
    if (!field) {
      if (++continuation > MAX_CONTINUATION_LINES) break;
      continue;
    }
    kinds.add(field.kind);
    if (field.kind === 'subject' && subject === null) subject = field.value;
    if (field.value.includes('@')) hasAddress = true;
    last = j;
  }
  if (!kinds.has('from') || kinds.size < 3 || (subject === null && !hasAddress)) return null;
  return { length: last - start + 1, subject };
}

// French webmails (Orange, SFR, La Poste) open the quoted message with "Message du <date>", in some
// versions framed by "====" and followed by "De : …" on the same line:
// "==== Message du : 04/03/2025 10:15 De : "Jean" <jean@…>".
const WEBMAIL_OPENING = /^[=\-*_\s]{0,20}message du\s?:?\s?(\d{1,4}[./-]\d{1,2}[./-]\d{2,4}.{0,300})$/i;
const INLINE_FROM = /\s(?:de|from)\s?:\s?(\S.{0,300})$/i;

function webmailOpening(line: string): { kind: HeaderFieldKind; value: string; kinds: HeaderFieldKind[] } | null {
  const trimmed = line.trim();
  if (trimmed.length > MAX_FIELD_LINE) return null;
  const match = WEBMAIL_OPENING.exec(trimmed);
  if (!match) return null;
  const rest = match[1] ?? '';
  const from = INLINE_FROM.exec(rest);
  if (from) return { kind: 'from', value: from[1] ?? '', kinds: ['date', 'from'] };
  return { kind: 'date', value: rest, kinds: ['date'] };
}

// Subject prefixes that mark a forward, as the clients write them.
const FORWARD_PREFIXES = [
  'fwd',
  'fw',
  'wg',
  'tr',
  'trs',
  'rv',
  'reenv',
  'i',
  'inoltro',
  'enc',
  'encaminhar',
  'doorst',
  'vb',
  'vs',
  'vl',
  'vid',
  'pd',
  'přeposlat',
  'tov',
  'ilt',
  'πρθ',
  'пересл',
  'переслать',
  '转发',
  '轉寄',
  '転送',
  '전달',
  'chuyển tiếp',
];
const FORWARD_SUBJECT = new RegExp(`^(?:${FORWARD_PREFIXES.join('|')})\\s*[:：]`);

/** True when a quoted Subject value marks a forward ("Fwd:", "WG:", "TR :", "转发:" …). */
export function isForwardSubject(subject: string): boolean {
  return FORWARD_SUBJECT.test(
    subject
      .trim()
      .toLowerCase()
      .replace(/\u0307/g, ''),
  );
}

/** What a separator line introduces. */
export type SeparatorKind = 'original' | 'forward' | 'forward-end';

// Names between the dashes of "-----Original Message-----"-style lines, lower-case.
const SEPARATOR_NAMES: Record<SeparatorKind, string[]> = {
  original: [
    'original',
    'original message',
    'original-nachricht',
    'reply message',
    'ursprüngliche nachricht',
    'originalnachricht',
    'ursprüngliche mail',
    "message d'origine",
    'message d’origine',
    'mail original',
    'message original',
    'mensaje original',
    'messaggio originale',
    'mensagem original',
    'oorspronkelijk bericht',
    'origineel bericht',
    'ursprungligt meddelande',
    'originalmeddelande',
    'opprinnelig melding',
    'oprindelig meddelelse',
    'oprindelig besked',
    'alkuperäinen viesti',
    'oryginalna wiadomość',
    'wiadomość oryginalna',
    'původní zpráva',
    'původní e-mail',
    'pôvodná správa',
    'pôvodný e-mail',
    'eredeti üzenet',
    'mesaj original',
    'orijinal ileti',
    'özgün ileti',
    'orijinal mesaj',
    'αρχικό μήνυμα',
    'исходное сообщение',
    'оригинальное сообщение',
    'оригінальне повідомлення',
    'вихідне повідомлення',
    '原始邮件',
    '原始郵件',
    '元のメッセージ',
    '원본 메시지',
    '원본 메일',
    'thư gốc',
    'pesan asli',
    'הודעה מקורית',
    'الرسالة الأصلية',
    'मूल संदेश',
    'ข้อความต้นฉบับ',
  ],
  forward: [
    'forwarded message',
    'forwarded message follows',
    'weitergeleitete nachricht',
    'message transféré',
    'mensaje reenviado',
    'messaggio inoltrato',
    'mensagem encaminhada',
    'mensagem reencaminhada',
    'doorgestuurd bericht',
    'vidarebefordrat meddelande',
    'videresendt melding',
    'videresendt meddelelse',
    'välitetty viesti',
    'przekazana wiadomość',
    'wiadomość przekazana',
    'přeposlaná zpráva',
    'preposlaná správa',
    'továbbított üzenet',
    'mesaj redirecționat',
    'iletilen ileti',
    'προωθημένο μήνυμα',
    'пересылаемое сообщение',
    'пересланное сообщение',
    'переслане повідомлення',
    '转发的邮件',
    '转发邮件信息',
    '轉寄的郵件',
    '転送されたメッセージ',
    '전달된 메시지',
    'thư đã chuyển tiếp',
    'pesan terusan',
    'הודעה שהועברה',
    'رسالة معاد توجيهها',
    'अग्रेषित संदेश',
  ],
  'forward-end': ['конец пересылаемого сообщения', 'end forwarded message', 'ende der weitergeleiteten nachricht'],
};

// Apple Mail and others write the forward marker as a phrase with a colon, without dashes.
const FORWARD_PHRASES = [
  'begin forwarded message',
  'anfang der weitergeleiteten nachricht',
  'début du message réexpédié',
  'début du message transféré',
  'inicio del mensaje reenviado',
  'comienzo del mensaje reenviado',
  'begin doorgestuurd bericht',
  'inizio messaggio inoltrato',
  'início da mensagem reencaminhada',
  'início da mensagem encaminhada',
  'mensagem encaminhada',
  'vidarebefordrat brev',
  'vidarebefordrat meddelande',
  'videresendt melding',
  'videresendt besked',
  'videresendt meddelelse',
  'välitetty viesti alkaa',
  'alkuperäinen viesti alkaa',
  'początek przekazywanej wiadomości',
  'początek przekazanej wiadomości',
  'začátek přeposlané zprávy',
  'začiatok preposlanej správy',
  'továbbított levél kezdete',
  'începutul mesajului redirecționat',
  'iletilen ileti başlangıcı',
  'yönlendirilen ileti',
  'έναρξη προωθημένου μηνύματος',
  'начало переадресованного сообщения',
  'начало пересылаемого сообщения',
  'початок пересланого листа',
  'початок пересланого повідомлення',
  '転送されたメッセージ',
  '开始转发的邮件',
  '以下是轉寄的郵件',
  '轉寄的郵件開始',
  '전달된 메시지',
  'bắt đầu tin nhắn được chuyển tiếp',
  'awal pesan yang diteruskan',
  'תחילת הודעה שהועברה',
  'بداية الرسالة المعاد توجيهها',
  'अग्रेषित संदेश प्रारंभ करें',
  'เริ่มข้อความที่ส่งต่อ',
];

const SEPARATOR_KIND = new Map<string, SeparatorKind>();
for (const [kind, names] of Object.entries(SEPARATOR_NAMES) as Array<[SeparatorKind, string[]]>) {
  for (const name of names) SEPARATOR_KIND.set(name, kind);
}
const FORWARD_PHRASE_SET = new Set(FORWARD_PHRASES);

const MAX_SEPARATOR_LINE = 120;

/**
 * The kind of a separator line: "-----Original Message-----", "----- Mail original -----",
 * "---------- Forwarded message ---------", "------------------ 原始邮件 ------------------",
 * "Begin forwarded message:" …; null for any other line.
 */
export function separatorKind(line: string): SeparatorKind | null {
  const trimmed = line.trim();
  if (trimmed.length < 5 || trimmed.length > MAX_SEPARATOR_LINE) return null;
  const dashed = /^[*_]*[-=_]{2,}/.test(trimmed);
  const name = trimmed
    .replace(/^[-=_*\s]+|[-=_*\s]+$/g, '')
    .replace(/\s*[:：]$/, '')
    .replace(/[’`]/g, "'")
    .replace(/\s+/g, ' ')
    .toLowerCase()
    .replace(/\u0307/g, ''); // Turkish "İ" lower-cases to "i" + combining dot
  if (dashed) return SEPARATOR_KIND.get(name) ?? SEPARATOR_KIND.get(name.replace(/'/g, '’')) ?? null;
  // Without dashes only the phrase form with its colon counts ("Begin forwarded message:").
  if (/[:：]$/.test(trimmed) && FORWARD_PHRASE_SET.has(name)) return 'forward';
  return null;
}
