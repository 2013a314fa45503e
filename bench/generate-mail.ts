/**
 * Deterministic benchmark mail: the same seed gives the same bytes on every machine.
 *
 * A corpus is spread over many customers and threads of varying length; a reply carries
 * In-Reply-To and References to the earlier messages of its thread and quotes the history the
 * way mail clients do (so sizes grow along a thread). Sizes run from 1 KB to 200 KB, skewed to
 * small: some mail has an HTML alternative (a few are HTML only), some have attachments, and a
 * few are out-of-office auto-replies, as in a real support inbox. MIME is built by nodemailer's
 * MailComposer, with boundaries drawn from the seeded PRNG (its default is crypto-random).
 *
 * Run directly to look at the mail: `npx tsx bench/generate-mail.ts --seed 1 --count 20 --out /tmp/mail`.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import MailComposer, { type MailComposerAttachment, type MailComposerOptions } from 'nodemailer/lib/mail-composer/index.js';

export const MIN_BYTES = 1024;
export const MAX_BYTES = 200 * 1024;
/** The first message of every corpus unless told otherwise: a Monday morning in 2025. */
export const DEFAULT_START = new Date('2025-03-03T08:00:00Z');

/** mulberry32: a tiny, fast, well-mixed 32-bit PRNG; good enough for test data, not for secrets. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
  /** Exponentially distributed, for arrival gaps. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i++)
      out += Math.floor(this.next() * 256)
        .toString(16)
        .padStart(2, '0');
    return out;
  }
  bytes(length: number): Buffer {
    const buffer = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i += 4) {
      const word = Math.floor(this.next() * 4294967296);
      for (let j = 0; j < 4 && i + j < length; j++) buffer[i + j] = (word >>> (8 * j)) & 0xff;
    }
    return buffer;
  }
}

// ---------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------

const FIRST = [
  'Alice',
  'Bogdan',
  'Chiara',
  'Dmitri',
  'Emeka',
  'Fatima',
  'Guo',
  'Hannah',
  'Ines',
  'Jonas',
  'Kenji',
  'Lena',
  'Mateo',
  'Nadia',
  'Oscar',
  'Priya',
  'Quentin',
  'Rosa',
  'Sven',
  'Tariq',
  'Ursula',
  'Viktor',
  'Wen',
  'Yusuf',
  'Zoe',
];
const LAST = [
  'Okafor',
  'Novak',
  'Rossi',
  'Ivanov',
  'Mensah',
  'Haddad',
  'Wei',
  'Schmidt',
  'Garcia',
  'Berg',
  'Tanaka',
  'Fischer',
  'Lopez',
  'Karimi',
  'Nilsson',
  'Patel',
  'Martin',
  'Silva',
  'Larsen',
  'Aziz',
  'Keller',
  'Petrov',
  'Chen',
  'Demir',
  'Moreau',
];
const FREE_MAIL = ['gmail.com', 'outlook.com', 'yahoo.com', 'proton.me', 'icloud.com', 'gmx.de'];
const COMPANIES = [
  'northwind.example',
  'contoso.example',
  'initech.example',
  'globex.example',
  'umbrella.example',
  'hooli.example',
  'vandelay.example',
  'wonka.example',
];
const MAILERS = ['Mozilla Thunderbird 128.3.1', 'Microsoft Outlook 16.0', 'Apple Mail (2.3774)', 'Gmail', 'K-9 Mail 6.800'];

interface Topic {
  subject: (n: number) => string;
  opening: readonly string[];
  details: readonly string[];
  followUps: readonly string[];
}

const TOPICS: readonly Topic[] = [
  {
    subject: (n) => `Invoice #${n} charged twice`,
    opening: ['I was charged twice for invoice #{n} this month.', 'My card statement shows two payments for invoice #{n}.'],
    details: [
      'Both charges are for the same amount and were taken on the same day.',
      'I only have one subscription and one seat, so the second charge looks like a mistake.',
      'Our finance team needs a corrected invoice before the end of the quarter.',
      'The second payment was taken from the backup card we keep on file.',
    ],
    followUps: [
      'Is there any update on the duplicate charge?',
      'The second charge is still on my statement.',
      'Could you confirm when the refund will arrive?',
    ],
  },
  {
    subject: () => 'Cannot log in after password reset',
    opening: [
      'I reset my password this morning and now I cannot log in at all.',
      'Since the password reset I get "invalid credentials" on every attempt.',
    ],
    details: [
      'I tried two browsers and cleared the cookies, with the same result.',
      'The reset email arrived and the link worked, but the new password is refused.',
      'Two-factor authentication is enabled on the account, in case that matters.',
      'My colleagues on the same team can still log in without problems.',
    ],
    followUps: [
      'I still cannot log in.',
      'I tried the steps you suggested but the error is the same.',
      'Is there a way to unlock the account from your side?',
    ],
  },
  {
    subject: (n) => `Order ${n} has not arrived`,
    opening: ['My order {n} was due last week and has not arrived.', 'The tracking page for order {n} has not changed for six days.'],
    details: [
      'The tracking number says the parcel is at the depot but nothing moves.',
      'I need the items for an event on Saturday, so timing matters.',
      'The delivery address is our office, which is staffed every weekday.',
      'The courier told me to contact the sender about it.',
    ],
    followUps: ['The parcel is still not here.', 'Any news from the courier?', 'Can you send a replacement instead?'],
  },
  {
    subject: () => 'Export to CSV fails with a timeout',
    opening: ['Exporting our reports to CSV fails with a timeout.', 'The CSV export has stopped working for larger date ranges.'],
    details: [
      'It works for one week of data but fails for a whole quarter.',
      'The error message says "request took too long" after about a minute.',
      'We rely on this export for our monthly board report.',
      'I attached a screenshot of the error and the browser console log.',
    ],
    followUps: ['The export still times out.', 'Is there a workaround until it is fixed?', 'Could you run the export for us on your side?'],
  },
  {
    subject: () => 'Question about upgrading our plan',
    opening: [
      'We are thinking about moving to the team plan.',
      'I would like to understand the difference between the plans before we upgrade.',
    ],
    details: [
      'We are twelve people now and expect to be twenty by the summer.',
      'Single sign-on is a requirement from our security team.',
      'We would prefer annual billing if there is a discount for it.',
      'Our current data should of course stay where it is.',
    ],
    followUps: [
      'Thanks, that helps. One more question about seats.',
      'Can we switch in the middle of the billing period?',
      'Who should I talk to about a quote?',
    ],
  },
  {
    subject: () => 'Webhook deliveries failing since Tuesday',
    opening: ['Our webhook endpoint has not received any events since Tuesday.', 'Webhook deliveries to our endpoint are all failing.'],
    details: [
      'The dashboard shows status 0 for every attempt, but our server is up.',
      'We rotated our TLS certificate on Monday evening.',
      'Events from the sandbox environment still arrive normally.',
      'We need the missed events replayed once this is fixed.',
    ],
    followUps: [
      'Deliveries are still failing.',
      'We checked the certificate chain and it looks fine.',
      'Can you replay the events from the last three days?',
    ],
  },
  {
    subject: () => 'Please cancel my subscription',
    opening: ['Please cancel my subscription at the end of the current period.', 'I would like to cancel our account.'],
    details: [
      'We are moving to a different tool for budget reasons.',
      'Please make sure we are not charged again next month.',
      'Can we keep read-only access to our data for a few weeks?',
      'I would also like a full export of our data before the account closes.',
    ],
    followUps: [
      'Can you confirm the cancellation?',
      'I have not received a confirmation yet.',
      'Thank you, and where do I find the export?',
    ],
  },
];

const GREETINGS = ['Hello,', 'Hi,', 'Hi there,', 'Good morning,', 'Dear support team,', 'Hello support,'];
const CLOSINGS = ['Thanks,', 'Thank you,', 'Best regards,', 'Kind regards,', 'Cheers,', 'Many thanks,'];
const FILLER = [
  'Let me know if you need any more information from me.',
  'I am happy to jump on a call if that is easier.',
  'This is getting a bit urgent for us.',
  'I appreciate your help with this.',
  'We have been customers for three years and this is the first real problem.',
  'Our account is under the company name, in case you need to look it up.',
  'I checked the help center first but could not find an answer.',
  'Apologies if this is the wrong address for this kind of question.',
];
const SUPPORT_LINES = [
  'Thank you for getting in touch, we are looking into this.',
  'I have passed this on to our billing team and will update you shortly.',
  'Could you send us a screenshot of the error you see?',
  'We have found the cause and a fix is being rolled out today.',
  'I have checked your account and can see the problem you describe.',
];
const LOG_LINES = [
  'INFO request started',
  'WARN slow query detected',
  'ERROR upstream timeout after 60000 ms',
  'INFO retrying request',
  'DEBUG cache miss for key report:q3',
];

// ---------------------------------------------------------------------------------------------
// Corpus shape
// ---------------------------------------------------------------------------------------------

export interface CorpusOptions {
  seed: number;
  /** Messages to produce in total. */
  count: number;
  /** Distinct customers the mail comes from. */
  customers?: number;
  supportAddress?: string;
  supportName?: string;
  /** The first message's Date header. */
  start?: Date;
  /** Mean gap between two messages of the corpus, in minutes. */
  meanGapMinutes?: number;
  /** Only thread starters from distinct senders (each needs its own reply): no replies, no auto-replies. */
  startersOnly?: boolean;
}

export interface GeneratedMail {
  /** 0-based position in the corpus. */
  index: number;
  raw: Buffer;
  messageId: string;
  date: Date;
  fromAddress: string;
  /** Which generated thread the mail belongs to, and its 1-based position there. */
  thread: number;
  position: number;
  kind: 'customer' | 'auto-reply';
  shape: { html: 'none' | 'alternative' | 'only'; attachments: number };
}

interface Customer {
  name: string;
  address: string;
  company: string | null;
  mailer: string;
}

interface ThreadPlan {
  id: number;
  customer: Customer;
  topic: Topic;
  topicNumber: number;
  subject: string;
  targetLength: number;
  /** Message-IDs so far, oldest first. */
  ids: string[];
  /** Plain text of the last message (what the next reply quotes). */
  lastText: string;
  lastDate: Date;
  /** Identifiers stated once each, one per message from the first (working-memory figures). */
  earlyReferences?: readonly string[];
}

function makeCustomer(rng: Rng, index: number): Customer {
  const first = rng.pick(FIRST);
  const last = rng.pick(LAST);
  const company = rng.chance(0.55) ? rng.pick(COMPANIES) : null;
  const domain = company ?? rng.pick(FREE_MAIL);
  // The index keeps addresses distinct however the names fall.
  const local = `${first}.${last}${index}`.toLowerCase();
  return { name: `${first} ${last}`, address: `${local}@${domain}`, company, mailer: rng.pick(MAILERS) };
}

/** Thread lengths are heavy-tailed: most threads are one or two messages, a few run long. */
function threadLength(rng: Rng): number {
  const u = rng.float();
  if (u < 0.4) return 1;
  if (u < 0.7) return rng.int(2, 3);
  if (u < 0.9) return rng.int(4, 8);
  if (u < 0.98) return rng.int(9, 30);
  return rng.int(31, 80);
}

/** Target size in bytes: log-scaled and skewed to small (median about 3 KB, about 15% over 40 KB). */
function targetSize(rng: Rng): number {
  const exponent = Math.pow(rng.float(), 2.2);
  return Math.round(MIN_BYTES * Math.pow(MAX_BYTES / MIN_BYTES, exponent));
}

function formatQuoteDate(date: Date): string {
  return date.toUTCString().replace('GMT', 'UTC');
}

function fill(template: string, n: number): string {
  return template.replace(/\{n\}/g, String(n));
}

function paragraph(rng: Rng, pool: readonly string[], sentences: number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) out.push(fill(rng.pick(pool), n));
  return out.join(' ');
}

function signature(customer: Customer): string {
  const lines = ['-- ', customer.name];
  if (customer.company)
    lines.push(
      customer.company.replace('.example', '').replace(/^./, (c) => c.toUpperCase()) + ' Ltd',
      '+44 20 7946 0' + customer.address.length.toString().padStart(3, '0'),
    );
  return lines.join('\n');
}

/** What the customer writes this time: greeting and one to five paragraphs; the closing comes separately. */
function newText(rng: Rng, plan: ThreadPlan, position: number): { body: string; closing: string } {
  const parts = [rng.pick(GREETINGS), ''];
  const first = position === 1 ? rng.pick(plan.topic.opening) : rng.pick(plan.topic.followUps);
  parts.push(`${fill(first, plan.topicNumber)} ${paragraph(rng, plan.topic.details, rng.int(1, 3), plan.topicNumber)}`);
  const extra = rng.int(0, 4);
  for (let i = 0; i < extra; i++)
    parts.push('', paragraph(rng, rng.chance(0.5) ? plan.topic.details : FILLER, rng.int(1, 4), plan.topicNumber));
  const closing = [rng.pick(CLOSINGS), plan.customer.name.split(' ')[0] ?? plan.customer.name, '', signature(plan.customer)].join('\n');
  return { body: parts.join('\n'), closing };
}

function quoteLines(text: string): string {
  return text
    .split('\n')
    .map((line) => (line.startsWith('>') ? `>${line}` : `> ${line}`))
    .join('\n');
}

/**
 * The history a reply quotes: the support team's answer (which quoted the customer's previous
 * message), the way it looks after a round trip through a mail client.
 */
function quotedHistory(rng: Rng, plan: ThreadPlan, date: Date, supportName: string, supportAddress: string): string {
  const supportDate = new Date(Math.floor((plan.lastDate.getTime() + date.getTime()) / 2000) * 1000);
  const supportReply = [
    `Hello ${plan.customer.name.split(' ')[0]},`,
    '',
    paragraph(rng, SUPPORT_LINES, rng.int(1, 3), plan.topicNumber),
    '',
    'Best regards,',
    supportName,
  ].join('\n');
  const nested = `${supportReply}\n\nOn ${formatQuoteDate(plan.lastDate)}, ${plan.customer.name} <${plan.customer.address}> wrote:\n${quoteLines(plan.lastText)}`;
  return `On ${formatQuoteDate(supportDate)}, ${supportName} <${supportAddress}> wrote:\n${quoteLines(nested)}`;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function htmlBody(fresh: string, quote: string | null): string {
  const paragraphs = fresh
    .split('\n\n')
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('\n');
  const quoted = quote
    ? `\n<div class="gmail_quote"><blockquote class="gmail_quote" style="margin:0 0 0 .8ex;border-left:1px #ccc solid;padding-left:1ex">${escapeHtml(quote).replace(/\n/g, '<br>\n')}</blockquote></div>`
    : '';
  return `<html><head><meta charset="utf-8"><style>p{font-family:Arial,sans-serif;font-size:14px}</style></head><body><div dir="ltr">\n${paragraphs}${quoted}\n</div></body></html>`;
}

function attachment(rng: Rng, bytes: number, n: number): MailComposerAttachment {
  const kind = rng.int(0, 2);
  if (kind === 0) {
    const header = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    return {
      filename: `screenshot-${n}.png`,
      contentType: 'image/png',
      content: Buffer.concat([header, rng.bytes(Math.max(0, bytes - header.length))]),
    };
  }
  if (kind === 1) {
    const header = Buffer.from('%PDF-1.7\n');
    return {
      filename: `invoice-${n}.pdf`,
      contentType: 'application/pdf',
      content: Buffer.concat([header, rng.bytes(Math.max(0, bytes - header.length))]),
    };
  }
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `2025-03-0${1 + (i % 9)}T10:${String(i % 60).padStart(2, '0')}:00Z ${rng.pick(LOG_LINES)} id=${rng.hex(4)}`;
    lines.push(line);
    size += line.length + 1;
  }
  return { filename: `export-${n}.log`, contentType: 'text/plain', content: lines.join('\n') };
}

/** Headers a message picks up on its way: relays, DKIM, the receiving server's verdict. */
function transitHeaders(rng: Rng, customer: Customer, date: Date): Record<string, string> {
  const domain = customer.address.split('@')[1] ?? 'example.net';
  const relay = `mx${rng.int(1, 9)}.${domain}`;
  return {
    Received: `from ${relay} (${relay} [192.0.2.${rng.int(1, 254)}]) by mx.acme.example with ESMTPS id ${rng.hex(6)}; ${date.toUTCString().replace('GMT', '+0000')}`,
    'DKIM-Signature': `v=1; a=rsa-sha256; c=relaxed/relaxed; d=${domain}; s=s${rng.int(1, 3)}; h=from:to:subject:date:message-id; bh=${Buffer.from(rng.hex(16)).toString('base64')}; b=${rng.bytes(96).toString('base64')}`,
    'Authentication-Results': `mx.acme.example; dkim=pass header.d=${domain}; spf=pass smtp.mailfrom=${domain}; dmarc=pass header.from=${domain}`,
    'X-Mailer': customer.mailer,
  };
}

interface Composed {
  raw: Buffer;
  text: string;
  html: GeneratedMail['shape']['html'];
  attachments: number;
}

async function composeCustomerMail(
  rng: Rng,
  plan: ThreadPlan,
  position: number,
  messageId: string,
  date: Date,
  support: { address: string; name: string },
): Promise<Composed> {
  const target = targetSize(rng);
  const written = newText(rng, plan, position);
  const reference = plan.earlyReferences?.[position - 1];
  let body = reference ? `${written.body}\n\nFor reference, the ID is ${reference}.` : written.body;
  const fresh = () => `${body}\n\n${written.closing}`;
  let quote = position > 1 ? quotedHistory(rng, plan, date, support.name, support.address) : null;
  const htmlMode: GeneratedMail['shape']['html'] = rng.chance(0.05) ? 'only' : rng.chance(0.25) ? 'alternative' : 'none';
  const wantsAttachment = rng.chance(0.15);

  // Quoted history beyond the target size is cut at a line, as a client trimming a long quote would.
  const budget = Math.max(MIN_BYTES, target) - 1500;
  if (quote && fresh().length + quote.length * (htmlMode === 'alternative' ? 2.2 : 1.1) > budget) {
    const room = Math.max(400, Math.floor((budget - fresh().length) / (htmlMode === 'alternative' ? 2.2 : 1.1)));
    quote = quote.slice(0, room).replace(/\n[^\n]*$/, '') + '\n> [...]';
  }
  const approx = () =>
    1500 + (fresh().length + (quote?.length ?? 0)) * (htmlMode === 'alternative' ? 2.2 : htmlMode === 'only' ? 1.5 : 1.05);
  const attachments: MailComposerAttachment[] = [];
  const remaining = target - approx();
  if (remaining > 512 && (wantsAttachment || target > 8 * 1024)) {
    attachments.push(attachment(rng, Math.floor(remaining * 0.73), plan.topicNumber));
  } else {
    // A long letter rather than a short one with a file: more paragraphs up to the target.
    while (approx() < target) body += `\n\n${paragraph(rng, FILLER.concat(plan.topic.details), 4, plan.topicNumber)}`;
  }
  const text = quote ? `${fresh()}\n\n${quote}\n` : `${fresh()}\n`;
  const references = plan.ids.length > 12 ? [plan.ids[0]!, ...plan.ids.slice(-11)] : plan.ids;
  const options: MailComposerOptions = {
    from: { name: plan.customer.name, address: plan.customer.address },
    to: { name: support.name, address: support.address },
    subject: position === 1 ? plan.subject : `${rng.pick(['Re: ', 'Re: ', 'Re: ', 'RE: ', 'AW: '])}${plan.subject}`,
    messageId,
    date,
    headers: transitHeaders(rng, plan.customer, date),
    baseBoundary: rng.hex(8),
    ...(position > 1 ? { inReplyTo: plan.ids.at(-1)!, references } : {}),
    ...(htmlMode === 'only'
      ? { html: htmlBody(fresh(), quote) }
      : { text, ...(htmlMode === 'alternative' ? { html: htmlBody(fresh(), quote) } : {}) }),
    ...(attachments.length > 0 ? { attachments } : {}),
  };
  let raw = await new MailComposer(options).compile().build();
  if (raw.length > MAX_BYTES && attachments.length > 0) {
    // base64 and headers overshot the cap: shrink the file and build again.
    const first = attachments[0]!;
    const content = first.content as Buffer | string;
    attachments[0] = {
      ...first,
      content: content.slice(0, Math.max(0, content.length - Math.ceil(((raw.length - MAX_BYTES) * 3) / 4) - 256)),
    };
    raw = await new MailComposer({ ...options, attachments }).compile().build();
  }
  return { raw, text: fresh(), html: htmlMode, attachments: attachments.length };
}

async function composeAutoReply(
  rng: Rng,
  customer: Customer,
  messageId: string,
  date: Date,
  support: { address: string; name: string },
): Promise<Buffer> {
  return new MailComposer({
    from: { name: customer.name, address: customer.address },
    to: support.address,
    subject: `Automatic reply: ${rng.pick(TOPICS).subject(rng.int(1000, 9999))}`,
    messageId,
    date,
    headers: { ...transitHeaders(rng, customer, date), 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' },
    baseBoundary: rng.hex(8),
    text: `I am out of the office until ${formatQuoteDate(new Date(date.getTime() + 7 * 86_400_000))} with limited access to email.\n\n${customer.name}\n`,
  })
    .compile()
    .build();
}

/** The corpus, one message at a time (a 10,000-message mailbox never sits in memory at once). */
export async function* generateMail(options: CorpusOptions): AsyncGenerator<GeneratedMail> {
  const rng = new Rng(options.seed);
  const support = { address: options.supportAddress ?? 'support@acme.example', name: options.supportName ?? 'Acme Support' };
  const customerCount = options.startersOnly ? options.count : (options.customers ?? Math.max(1, Math.ceil(options.count / 6)));
  const customers: Customer[] = [];
  const customerAt = (i: number): Customer => {
    while (customers.length <= i) customers.push(makeCustomer(rng, customers.length));
    return customers[i]!;
  };
  const meanGapMs = (options.meanGapMinutes ?? 9) * 60_000;
  let clock = (options.start ?? DEFAULT_START).getTime();
  const open: ThreadPlan[] = [];
  let threads = 0;
  const idDomain = `bench-${options.seed.toString(36)}`;

  for (let index = 0; index < options.count; index++) {
    clock += Math.max(1000, Math.round(rng.exponential(meanGapMs)));
    const date = new Date(Math.floor(clock / 1000) * 1000);
    const customerIndex = options.startersOnly ? index : rng.int(0, customerCount - 1);

    if (!options.startersOnly && rng.chance(0.03)) {
      const customer = customerAt(customerIndex);
      const messageId = `<ooo.${index}.${rng.hex(4)}@${idDomain}.${customer.address.split('@')[1]}>`;
      const raw = await composeAutoReply(rng, customer, messageId, date, support);
      yield {
        index,
        raw,
        messageId,
        date,
        fromAddress: customer.address,
        thread: -1,
        position: 1,
        kind: 'auto-reply',
        shape: { html: 'none', attachments: 0 },
      };
      continue;
    }

    const continueThread = !options.startersOnly && open.length > 0 && rng.chance(0.6);
    let plan: ThreadPlan;
    if (continueThread) {
      plan = open[rng.int(0, open.length - 1)]!;
    } else {
      const topic = rng.pick(TOPICS);
      const topicNumber = rng.int(1000, 99999);
      plan = {
        id: threads++,
        customer: customerAt(customerIndex),
        topic,
        topicNumber,
        subject: topic.subject(topicNumber),
        targetLength: options.startersOnly ? 1 : threadLength(rng),
        ids: [],
        lastText: '',
        lastDate: date,
      };
      open.push(plan);
    }
    const position = plan.ids.length + 1;
    const messageId = `<${index}.${rng.hex(6)}@${idDomain}.${plan.customer.address.split('@')[1]}>`;
    const composed = await composeCustomerMail(rng, plan, position, messageId, date, support);
    plan.ids.push(messageId);
    plan.lastText = composed.text;
    plan.lastDate = date;
    if (plan.ids.length >= plan.targetLength) open.splice(open.indexOf(plan), 1);
    yield {
      index,
      raw: composed.raw,
      messageId,
      date,
      fromAddress: plan.customer.address,
      thread: plan.id,
      position,
      kind: 'customer',
      shape: { html: composed.html, attachments: composed.attachments },
    };
  }
}

export async function generateCorpus(options: CorpusOptions): Promise<GeneratedMail[]> {
  const out: GeneratedMail[] = [];
  for await (const mail of generateMail(options)) out.push(mail);
  return out;
}

export interface ThreadOptions {
  seed: number;
  /** Messages in the thread, all from one customer. */
  length: number;
  supportAddress?: string;
  supportName?: string;
  start?: Date;
  /** Mean gap between two messages of the thread, in hours. */
  meanGapHours?: number;
  /** Identifiers to state once each in messages 1, 2, …, and never again. */
  earlyReferences?: readonly string[];
}

/** One long conversation: every message replies to the one before and quotes the history. */
export async function generateThread(options: ThreadOptions): Promise<GeneratedMail[]> {
  const rng = new Rng(options.seed);
  const support = { address: options.supportAddress ?? 'support@acme.example', name: options.supportName ?? 'Acme Support' };
  const customer = makeCustomer(rng, 0);
  const topic = rng.pick(TOPICS);
  const topicNumber = rng.int(1000, 99999);
  const plan: ThreadPlan = {
    id: 0,
    customer,
    topic,
    topicNumber,
    subject: topic.subject(topicNumber),
    targetLength: options.length,
    ids: [],
    lastText: '',
    lastDate: options.start ?? DEFAULT_START,
    ...(options.earlyReferences ? { earlyReferences: options.earlyReferences } : {}),
  };
  let clock = (options.start ?? DEFAULT_START).getTime();
  const out: GeneratedMail[] = [];
  for (let index = 0; index < options.length; index++) {
    if (index > 0) clock += Math.max(600_000, Math.round(rng.exponential((options.meanGapHours ?? 6) * 3_600_000)));
    const date = new Date(Math.floor(clock / 1000) * 1000);
    const messageId = `<thread.${index}.${rng.hex(6)}@bench-${options.seed.toString(36)}.${customer.address.split('@')[1]}>`;
    const composed = await composeCustomerMail(rng, plan, index + 1, messageId, date, support);
    plan.ids.push(messageId);
    plan.lastText = composed.text;
    plan.lastDate = date;
    out.push({
      index,
      raw: composed.raw,
      messageId,
      date,
      fromAddress: customer.address,
      thread: 0,
      position: index + 1,
      kind: 'customer',
      shape: { html: composed.html, attachments: composed.attachments },
    });
  }
  return out;
}

/** Sizes and shapes of a corpus plus a hash of its bytes, for the results' `inputs`. */
export function describeCorpus(mail: readonly GeneratedMail[]): Record<string, unknown> {
  const hash = createHash('sha256');
  const sizes = mail.map((m) => m.raw.length).sort((a, b) => a - b);
  for (const m of mail) hash.update(m.raw);
  const at = (q: number) => sizes[Math.min(sizes.length - 1, Math.floor(q * sizes.length))] ?? 0;
  const threads = new Map<number, number>();
  for (const m of mail) if (m.thread >= 0) threads.set(m.thread, (threads.get(m.thread) ?? 0) + 1);
  return {
    messages: mail.length,
    customers: new Set(mail.map((m) => m.fromAddress)).size,
    threads: threads.size,
    longestThread: Math.max(0, ...threads.values()),
    replies: mail.filter((m) => m.position > 1).length,
    autoReplies: mail.filter((m) => m.kind === 'auto-reply').length,
    withHtml: mail.filter((m) => m.shape.html !== 'none').length,
    htmlOnly: mail.filter((m) => m.shape.html === 'only').length,
    withAttachments: mail.filter((m) => m.shape.attachments > 0).length,
    bytes: { min: sizes[0] ?? 0, p50: at(0.5), p90: at(0.9), max: sizes.at(-1) ?? 0, total: sizes.reduce((a, b) => a + b, 0) },
    sha256: hash.digest('hex'),
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const value = (name: string, fallback: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
  };
  const corpus = await generateCorpus({ seed: Number(value('--seed', '1')), count: Number(value('--count', '20')) });
  const out = value('--out', '');
  if (out) {
    await mkdir(out, { recursive: true });
    for (const m of corpus) await writeFile(path.join(out, `${String(m.index).padStart(5, '0')}.eml`), m.raw);
  }
  console.log(JSON.stringify(describeCorpus(corpus), null, 2));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
