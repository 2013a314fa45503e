/**
 * Automated notices without a DSN part, recognised by the layout their software writes rather than
 * by wording alone: the fml list manager's notices (its X-MLServer/X-ML-Name headers and
 * "<list>-admin" sender), carrier gateways' templates (au/KDDI's "Your mail sent on: … Could not be
 * delivered to: <…>"), Apache James's and Verizon's "Message details:" block (indented
 * "MAIL FROM:"/"RCPT TO:" fields), InterScan/Trend Micro's SMTP transcript ("Sent <<< RCPT TO:",
 * "Received >>> 550 …"), and a bounce forwarded with nothing written above it. Structure decides
 * alone only where no person writes it (fml's own headers and sender together; the KDDI template
 * as the whole first lines); the rest is evidence that needs a second kind to agree (bounce.ts).
 * Pure; reads the capped own-text lines bounce.ts gives it and a few header fields.
 */
import { localPartOf } from './addresses.ts';
import {
  BODY_PHRASES,
  DAEMON_LOCAL_PARTS,
  DELIVERY_DISPLAY_NAMES,
  DELIVERY_ROLE_LOCAL_PARTS,
  SUBJECT_PATTERNS,
  type Flavour,
} from './automated-phrases.ts';
import { headerBlockAt, isForwardSubject, separatorKind } from './header-block.ts';
import { isMobileFooter } from './footers.ts';
import type { ParsedEmail } from './parse-message.ts';

/** One piece of weak evidence, in bounce.ts's categories. */
export interface NoticeEvidence {
  category: 'sender' | 'subject' | 'text' | 'header';
  flavour: Flavour | null;
  signal: string;
}

/** A notice recognised by structure alone. */
export interface NoticeDecision {
  reason: 'bounce' | 'mailing-list' | 'auto-reply';
  signal: string;
  failed: boolean;
}

const FML_HEADERS = ['x-mlserver', 'x-ml-server', 'x-ml-name'];
const FML_LIST_HELD = /\b(?:moderat|approv)/;

/**
 * Notices decided by structure: fml's (a list-manager header, and its "-admin" sender or an fml
 * Message-ID), and au/KDDI's carrier template as the opening lines of the text.
 */
export function gatewayStructure(email: ParsedEmail, lines: readonly string[]): NoticeDecision | null {
  const fmlHeader = FML_HEADERS.find((name) => header(email, name) !== undefined);
  if (fmlHeader) {
    const local = localPartOf(email.from?.address ?? '');
    const fmlId = /\.fml\d*[.@]/i.test(email.messageId ?? '');
    if (/-admin$/.test(local) || fmlId) {
      const held = FML_LIST_HELD.test(email.subject.toLowerCase());
      return {
        reason: held ? 'mailing-list' : 'bounce',
        signal: `fml list-manager notice (${fmlHeader}, ${fmlId ? 'fml Message-ID' : `sender ${local}`})`,
        failed: !held,
      };
    }
  }
  // Amazon SNS mails every notification of a topic with its unsubscribe footer; one that is not an
  // SES delivery report (those are read before this, with their Message-IDs) is still no person.
  const from = email.from?.address ?? '';
  if (/@sns\.amazonaws\.com$/.test(from) && lines.some((l) => l.startsWith('if you wish to stop receiving notifications from this topic')))
    return { reason: 'auto-reply', signal: 'Amazon SNS topic notification', failed: false };
  if (kddiTemplate(lines))
    return { reason: 'bounce', signal: 'carrier error template ("Your mail sent on: … Could not be delivered to:")', failed: true };
  return null;
}

// "Your mail sent on: <date>" then, within three lines, "Could not be delivered to: <address>".
function kddiTemplate(lines: readonly string[]): boolean {
  const first = lines.findIndex((l) => l !== '');
  for (let i = Math.max(first, 0); i < Math.min(lines.length, first + 8); i++) {
    if (!/^your mail (?:sent|attempted to be delivered) on:/.test(lines[i] ?? '')) continue;
    for (let j = i + 1; j <= i + 3 && j < lines.length; j++)
      if (/^could not be delivered to:\s?<[^<>\s]{1,200}@/.test(lines[j] ?? '')) return true;
  }
  return false;
}

const MAX_TEMPLATE_LINES = 200;

// US carriers' mail-to-SMS/MMS gateway domains, where people's addresses are phone numbers and the
// gateway's own notices come from a name (Japanese carriers' domains are people's mailboxes: not here).
const CARRIER_GATEWAYS: ReadonlySet<string> = new Set([
  'vtext.com',
  'vzwpix.com',
  'txt.att.net',
  'mms.att.net',
  'tmomail.net',
  'messaging.sprintpcs.com',
]);

/** Evidence from layouts and senders the phrase lists do not cover. */
export function gatewayEvidence(email: ParsedEmail, lines: readonly string[]): NoticeEvidence[] {
  const evidence: NoticeEvidence[] = [];
  const name = (email.from?.name ?? '').trim().toLowerCase();
  if (/^interscan\b|\binterscan (?:messaging|mss)|^trend ?micro\b/.test(name))
    evidence.push({ category: 'sender', flavour: null, signal: `sender name "${email.from?.name}"` });
  const address = email.from?.address ?? '';
  const local = localPartOf(address);
  const domain = address.slice(address.lastIndexOf('@') + 1);
  // Carriers' mail-to-SMS/MMS gateways: people write from <number>@ there, the gateway from a name.
  if (CARRIER_GATEWAYS.has(domain) && !/^\+?\d{6,}$/.test(local))
    evidence.push({ category: 'sender', flavour: null, signal: `sender is the carrier gateway ${local}@${domain}` });
  if (/-admin$/.test(local) && FML_HEADERS.some((h) => header(email, h) !== undefined))
    evidence.push({ category: 'sender', flavour: null, signal: `sender is a list manager (${local})` });

  let details = -1;
  let envelopeFields = 0;
  let transcript = 0;
  for (let i = 0; i < lines.length && i < MAX_TEMPLATE_LINES; i++) {
    const line = lines[i] ?? '';
    if (line === 'message details:') details = i;
    else if (details >= 0 && i - details <= 10 && /^(?:mail from|rcpt to|sent date):/.test(line)) envelopeFields++;
    if (/^(?:sent <<< (?:rcpt to|mail from|data)\b|received >>> [45]\d\d\b)/.test(line)) transcript++;
  }
  if (envelopeFields >= 2)
    evidence.push({ category: 'text', flavour: 'bounce', signal: 'a "Message details:" block with MAIL FROM/RCPT TO (James, Verizon)' });
  if (transcript >= 1) evidence.push({ category: 'text', flavour: 'bounce', signal: 'an SMTP transcript ("Sent <<<", "Received >>>")' });
  return evidence;
}

// Forward separators people's clients write, and the lines that end what the forwarder typed.
const MAX_FORWARD_SCAN_LINES = 400;

/**
 * A bounce forwarded with nothing written above it ("Fwd: Returned mail: see transcript for
 * details", only the forwarded report below): no one asks anything, so it is read as the bounce
 * it carries. With a note above the forward (n001, n029, n063 in the look-alikes), it is a person
 * asking about a bounce and is answered. The forwarded part must itself be a bounce: the subject
 * after the forward prefix is a bounce subject, or the forwarded header block's sender is a
 * mailer daemon or postmaster, or its wording is a bounce's.
 */
export function forwardedBounce(email: ParsedEmail): string | null {
  const subject = email.subject.trim();
  if (!isForwardSubject(subject)) return null;
  const inner = stripForwardPrefixes(subject.toLowerCase());
  const innerSubject = SUBJECT_PATTERNS.find((p) => p.pattern.test(inner) && (p.flavour === 'bounce' || p.flavour === 'delay'));

  const lines = (email.textPart ?? email.bodyText)
    .slice(0, 64 * 1024)
    .replace(/\r\n?/g, '\n')
    .split('\n');
  let start = -1;
  for (let i = 0; i < lines.length && i < MAX_FORWARD_SCAN_LINES; i++) {
    const trimmed = (lines[i] ?? '').trim();
    if (trimmed === '' || isMobileFooter(trimmed) || /^[-_=*]{3,}$/.test(trimmed)) continue;
    if (separatorKind(trimmed) !== null || headerBlockAt(lines, i) || trimmed.startsWith('>')) {
      start = i;
      break;
    }
    return null; // the forwarder wrote something: a person's question
  }
  const attached = email.reportParts.some((p) => p.contentType === 'message/rfc822' || p.contentType === 'message/global');
  if (start < 0 && !attached) return null;

  const attachedText = email.reportParts
    .filter((p) => p.contentType === 'message/rfc822' || p.contentType === 'message/global')
    .map((p) => p.text.slice(0, 16 * 1024))
    .join('\n');
  const forwarded = `${start >= 0 ? lines.slice(start, start + MAX_FORWARD_SCAN_LINES).join('\n') : ''}\n${attachedText}`.toLowerCase();
  const fromDaemon = forwardedSenderIsDaemon(forwarded);
  const wording = BODY_PHRASES.some((p) => p.flavour === 'bounce' && forwarded.includes(p.text));
  if (!innerSubject && !fromDaemon && !wording) return null;
  const why = innerSubject
    ? `subject "${subject.slice(0, 80)}"`
    : fromDaemon
      ? 'forwarded from a mailer daemon'
      : 'bounce wording in the forwarded text';
  return `a bounce forwarded with no note of the forwarder's own (${why})`;
}

function stripForwardPrefixes(subject: string): string {
  let rest = subject;
  for (let i = 0; i < 5 && isForwardSubject(rest); i++) rest = rest.replace(/^[^:：]{1,20}[:：]\s*/, '');
  return rest.trim();
}

function forwardedSenderIsDaemon(forwarded: string): boolean {
  const from = /^(?:from|von|de|da|van|från|fra|od|от|发件人|差出人)\s?[:：]\s?(.{1,300})$/m.exec(forwarded)?.[1];
  if (!from) return false;
  const address = /<?([^\s<>"]{1,100})@[^\s<>"]{1,200}>?/.exec(from)?.[1] ?? '';
  const compact = address.replace(/[-_.]/g, '');
  const display = from.replace(/<.*$/, '').replace(/"/g, '').trim();
  return DAEMON_LOCAL_PARTS.has(compact) || DELIVERY_ROLE_LOCAL_PARTS.has(compact) || DELIVERY_DISPLAY_NAMES.has(display);
}

function header(email: ParsedEmail, name: string): string | undefined {
  return email.rawHeaders.get(name)?.[0];
}
