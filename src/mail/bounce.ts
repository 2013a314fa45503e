/**
 * Recognises automated reports about mail that was sent, whatever container they come in:
 * delivery status notifications (RFC 3464 in multipart/report, but also the same in
 * multipart/mixed, and DSN text in text/plain or HTML from Postfix, Exim, Sendmail, qmail,
 * Exchange, Domino, Gmail, Yahoo and others, in their languages), feedback-loop complaints (ARF in
 * any multipart, ARF fields in text, Microsoft JMRP), sending providers' JSON notifications,
 * list-manager rejections and moderation notices, carrier and SMS-gateway error notices. It also
 * finds the Message-IDs of the mail a report is about, and whether delivery failed for good.
 *
 * How much evidence is enough: one structural signal decides on its own (a report part, a
 * provider notification, a mailer-daemon sender, X-Failed-Recipients, ARF feedback fields). The
 * rest are weaker, because people produce them too (a company admin writes from postmaster@, a
 * customer's subject says "Delivery failed", a customer pastes a bounce into a question): they
 * decide only when two of different kinds agree (sender role, subject, body wording, automation
 * headers, a returned copy of our own mail). Wording is read only in the mail's own text: quoted
 * lines and anything after a forward separator belong to someone else. Pure and linear: the text
 * read is capped, and patterns are anchored or bounded.
 */
import { localPartOf } from './addresses.ts';
import {
  ABUSE_ROLE_LOCAL_PARTS,
  BODY_PHRASES,
  DAEMON_LOCAL_PARTS,
  DELIVERY_DISPLAY_NAMES,
  DELIVERY_ROLE_LOCAL_PARTS,
  FORWARD_MARKERS,
  LIST_ROLE_LOCAL_PARTS,
  SUBJECT_PATTERNS,
  type Flavour,
} from './automated-phrases.ts';
import { forwardedBounce, gatewayEvidence, gatewayStructure } from './gateway-notice.ts';
import type { ParsedEmail, ReportPart } from './parse-message.ts';
import { readProviderNotification } from './provider-notification.ts';

/** What kind of automated report a mail is, mapped onto the skip reasons. */
export type ReportReason = 'bounce' | 'complaint' | 'mailing-list' | 'auto-reply';

export interface AutomatedReport {
  reason: ReportReason;
  /** The signals that decided, in the order found, for the audit trail. */
  signals: string[];
  /** Message-IDs (with angle brackets) of the mail the report is about; empty when it names none. */
  originalMessageIds: string[];
  /** Delivery failed for good (a sent draft among `originalMessageIds` has bounced); false for delays, successes, complaints, notices. */
  failed: boolean;
  /** Recipient, status and diagnostic of the first failed recipient, when the report gives them. */
  diagnostic: string | null;
}

export interface ReportContext {
  /** The support mailbox: a returned copy of our own mail is a hint that this is a report about it. */
  supportAddress: string;
}

/** How much of the text the wording checks read (DSN text is at the top). */
const TEXT_SCAN_CHARS = 64 * 1024;
const MAX_ORIGINAL_IDS = 10;

/** ARF's registered feedback types (RFC 5965, 6591, 6650); a contact form's "Feedback-Type: complaint" is not one. */
const ARF_FEEDBACK_TYPES = /^feedback-type:\s*(?:abuse|fraud|virus|other|not-spam|auth-failure|opt-out|opt-out-list|dmarc)\b/;
const ARF_FIELDS =
  /^(?:version|user-agent|original-mail-from|original-rcpt-to|original-envelope-id|arrival-date|received-date|source-ip|reported-domain|reported-uri|authentication-results|auth-failure|incidents|removal-recipient):/;

const DELIVERY_REPORT_TYPES = new Set(['message/delivery-status', 'message/global-delivery-status']);
const RETURNED_MESSAGE_TYPES = new Set([
  'message/rfc822',
  'message/global',
  'text/rfc822-headers',
  'message/rfc822-headers',
  'message/global-headers',
  'text/rfc822',
]);
const MDN_TYPES = new Set(['message/disposition-notification', 'message/global-disposition-notification']);

type Category = 'sender' | 'subject' | 'text' | 'header' | 'returned';

interface Evidence {
  category: Category;
  flavour: Flavour | null;
  signal: string;
}

/** The automated report this mail is, or null for anything else (people's mail, auto-replies, list posts). */
export function recogniseAutomatedReport(email: ParsedEmail, context: ReportContext): AutomatedReport | null {
  const text = ownText(email);
  const decided = structural(email, text);
  if (decided) return finish(email, decided.reason, [decided.signal], decided.failed, decided.ids ?? [], decided.diagnostic ?? null);
  const forwarded = forwardedBounce(email);
  if (forwarded) return finish(email, 'bounce', [forwarded], true, [], null);

  const evidence = weakEvidence(email, text, context);
  const categories = new Set(evidence.map((e) => e.category));
  if (categories.size < 2) return null;
  const flavours = new Set(evidence.map((e) => e.flavour).filter((f): f is Flavour => f !== null));
  const reason: ReportReason = flavours.has('list-held')
    ? 'mailing-list'
    : flavours.has('complaint') && !flavours.has('bounce')
      ? 'complaint'
      : 'bounce';
  const delayOrSuccess = (flavours.has('delay') || flavours.has('success')) && !hasFailedAction(email.reportParts);
  const failed = reason === 'bounce' && !delayOrSuccess;
  return finish(
    email,
    reason,
    evidence.map((e) => e.signal),
    failed,
    [],
    null,
  );
}

interface Decision {
  reason: ReportReason;
  signal: string;
  failed: boolean;
  ids?: string[];
  diagnostic?: string | null;
}

/** Signals that are never produced by a person writing mail. */
function structural(email: ParsedEmail, text: OwnText): Decision | null {
  const partTypes = new Set(email.reportParts.map((p) => p.contentType));
  const reportType = email.reportType;
  const deliveryFailed = (): boolean => {
    const actions = deliveryActions(email.reportParts);
    if (actions.length > 0) return actions.includes('failed');
    return !delayOrSuccessWording(email, text);
  };

  if (reportType === 'feedback-report' || partTypes.has('message/feedback-report')) {
    return {
      reason: 'complaint',
      signal: reportType === 'feedback-report' ? 'multipart/report feedback-report (ARF)' : 'message/feedback-report part (ARF)',
      failed: false,
    };
  }
  if (reportType === 'disposition-notification' || [...partTypes].some((t) => MDN_TYPES.has(t))) {
    return { reason: 'auto-reply', signal: 'read receipt (disposition-notification)', failed: false };
  }
  if (reportType !== null || [...partTypes].some((t) => DELIVERY_REPORT_TYPES.has(t))) {
    const signal =
      reportType !== null ? `multipart/report ${reportType || 'without report-type'}` : 'message/delivery-status part in a multipart/mixed';
    return { reason: 'bounce', signal, failed: deliveryFailed(), diagnostic: deliveryDiagnostic(email.reportParts) };
  }
  // Microsoft's JMRP puts the complainant into the returned message's headers and nothing else.
  const jmrp =
    header(email, 'x-hmxmroriginalrecipient') !== undefined ||
    email.reportParts.some((p) => RETURNED_MESSAGE_TYPES.has(p.contentType) && headerBlock(p.text).has('x-hmxmroriginalrecipient'));
  if (jmrp) return { reason: 'complaint', signal: 'X-HmXmrOriginalRecipient (Microsoft JMRP complaint)', failed: false };
  if (text.arfFields) return { reason: 'complaint', signal: 'ARF feedback fields in the text', failed: false };

  const provider = readProviderNotification(email.textPart ?? email.bodyText) ?? readProviderNotification(jsonPart(email.reportParts));
  if (provider) {
    return {
      reason: provider.kind,
      signal: `${provider.provider} notification (${provider.event})`,
      failed: provider.failed,
      ids: provider.messageIds,
      diagnostic: provider.diagnostic,
    };
  }

  const gateway = gatewayStructure(email, text.lines);
  if (gateway) return { reason: gateway.reason, signal: gateway.signal, failed: gateway.failed };

  if (header(email, 'x-failed-recipients') !== undefined)
    return { reason: 'bounce', signal: 'X-Failed-Recipients present', failed: deliveryFailed() };
  if (header(email, 'x-ms-exchange-message-is-ndr') !== undefined)
    return { reason: 'bounce', signal: 'X-MS-Exchange-Message-Is-Ndr present', failed: deliveryFailed() };
  if (header(email, 'x-mddsn-message') !== undefined)
    return { reason: 'bounce', signal: 'X-MDDSN-Message present (MDaemon DSN)', failed: deliveryFailed() };
  if (/\bscomp\b/i.test(header(email, 'x-loop') ?? ''))
    return { reason: 'complaint', signal: 'X-Loop: scomp (AOL feedback loop)', failed: false };

  const from = email.from?.address ?? null;
  if (from) {
    const local = localPartOf(from);
    const compact = local.replace(/[-_.]/g, '');
    if (DAEMON_LOCAL_PARTS.has(compact)) {
      const listNotice = text.flavours.has('list-held') ? 'mailing-list' : null;
      return { reason: listNotice ?? 'bounce', signal: `sender is ${local}`, failed: listNotice === null && deliveryFailed() };
    }
    // VERP return addresses (bounces+1234-ab=example.com@…) are never a person's From.
    if (/^bounces?[+-].*=/.test(local)) return { reason: 'bounce', signal: 'sender is a VERP bounce address', failed: deliveryFailed() };
    if (/^microsoftexchange[0-9a-f]{32}$/.test(local))
      return { reason: 'bounce', signal: "sender is Exchange's system mailbox", failed: deliveryFailed() };
  }
  return null;
}

function weakEvidence(email: ParsedEmail, text: OwnText, context: ReportContext): Evidence[] {
  const evidence: Evidence[] = [];
  const from = email.from?.address ?? null;
  if (from) {
    const local = localPartOf(from);
    const compact = local.replace(/[-_.]/g, '');
    if (DELIVERY_ROLE_LOCAL_PARTS.has(compact) || /^bounces?-/.test(local))
      evidence.push({ category: 'sender', flavour: null, signal: `sender is ${local}` });
    else if (LIST_ROLE_LOCAL_PARTS.has(compact) || /-(?:owner|bounces|request)$/.test(local) || /^owner-/.test(local)) {
      evidence.push({ category: 'sender', flavour: null, signal: `sender is a list manager (${local})` });
    } else if (ABUSE_ROLE_LOCAL_PARTS.has(compact) || from === 'staff@hotmail.com')
      evidence.push({ category: 'sender', flavour: null, signal: `sender is ${local}` });
  }
  const name = (email.from?.name ?? '').trim().toLowerCase();
  if (DELIVERY_DISPLAY_NAMES.has(name) || /postmaster$/.test(name) || /^(?:courier mail server at|l-soft list server at) /.test(name)) {
    evidence.push({ category: 'sender', flavour: null, signal: `sender name "${email.from?.name}"` });
  }

  const subject = email.subject.trim().toLowerCase().slice(0, 1000);
  const subjectMatch = SUBJECT_PATTERNS.find((p) => p.pattern.test(subject));
  if (subjectMatch)
    evidence.push({ category: 'subject', flavour: subjectMatch.flavour, signal: `subject "${email.subject.trim().slice(0, 80)}"` });

  for (const flavour of text.flavours) evidence.push({ category: 'text', flavour, signal: `${flavour} wording in the text` });
  if (text.deliveryFields) evidence.push({ category: 'text', flavour: 'bounce', signal: 'delivery-status fields in the text' });
  evidence.push(...gatewayEvidence(email, text.lines));

  const autoSubmitted = (header(email, 'auto-submitted') ?? '').split(/[;(\s]/)[0]?.toLowerCase() ?? '';
  if (autoSubmitted && autoSubmitted !== 'no')
    evidence.push({ category: 'header', flavour: null, signal: `Auto-Submitted: ${autoSubmitted}` });
  if (header(email, 'x-list-administrivia') !== undefined)
    evidence.push({ category: 'header', flavour: null, signal: 'x-list-administrivia present' });
  // List servers put these on every post they distribute too: they count only on the list's own notices.
  if (evidence.some((e) => e.category === 'sender')) {
    for (const name of ['x-mailman-version', 'x-ml-name', 'x-mlserver']) {
      if (header(email, name) !== undefined) evidence.push({ category: 'header', flavour: null, signal: `${name} present` });
    }
  }
  const returnPath = header(email, 'return-path');
  if (returnPath !== undefined && /^<?\s*>?$/.test(returnPath.trim()))
    evidence.push({ category: 'header', flavour: null, signal: 'empty Return-Path <>' });

  const ours = email.reportParts.some(
    (p) => RETURNED_MESSAGE_TYPES.has(p.contentType) && fromAddressOf(headerBlock(p.text)) === context.supportAddress,
  );
  if (ours) evidence.push({ category: 'returned', flavour: null, signal: 'returns a copy of our own mail' });
  return evidence;
}

function finish(
  email: ParsedEmail,
  reason: ReportReason,
  signals: string[],
  failed: boolean,
  providerIds: string[],
  diagnostic: string | null,
): AutomatedReport {
  const ids = reason === 'bounce' || reason === 'complaint' || reason === 'mailing-list' ? originalMessageIds(email, providerIds) : [];
  return {
    reason,
    signals: [...new Set(signals)],
    originalMessageIds: ids,
    failed,
    diagnostic: diagnostic ?? (failed ? textDiagnostic(email) : null),
  };
}

interface OwnText {
  /** Flavours of body wording found in the mail's own lines. */
  flavours: Set<Flavour>;
  /** A block of ARF feedback fields with a registered feedback type. */
  arfFields: boolean;
  /** Final-Recipient/Action/Status lines, as a DSN's machine part written inline. */
  deliveryFields: boolean;
  /** The own lines, trimmed and lower-cased. */
  lines: string[];
}

/**
 * The mail's own text: the first `TEXT_SCAN_CHARS` of the text (or the HTML's visible text), up to
 * the first forward separator, without quoted (`>`) lines.
 */
function ownText(email: ParsedEmail): OwnText {
  const source = (email.textPart ?? email.bodyText).slice(0, TEXT_SCAN_CHARS);
  const lines: string[] = [];
  for (const raw of source.split('\n')) {
    const line = raw.trim().toLowerCase();
    if (FORWARD_MARKERS.some((marker) => marker.test(line))) break;
    if (line.startsWith('>')) continue;
    lines.push(line);
  }
  const own = lines.join('\n');
  const flavours = new Set<Flavour>();
  for (const phrase of BODY_PHRASES) if (!flavours.has(phrase.flavour) && own.includes(phrase.text)) flavours.add(phrase.flavour);

  let arfFields = false;
  let deliveryFields = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^(?:final-recipient|action|status|diagnostic-code|reporting-mta):/.test(line)) deliveryFields++;
    if (!arfFields && ARF_FEEDBACK_TYPES.test(line)) {
      let fields = 0;
      for (let j = Math.max(0, i - 10); j < Math.min(lines.length, i + 20); j++) if (ARF_FIELDS.test(lines[j]!)) fields++;
      arfFields = fields >= 2;
    }
  }
  return { flavours, arfFields, deliveryFields: deliveryFields >= 3, lines };
}

function delayOrSuccessWording(email: ParsedEmail, text: OwnText): boolean {
  if (text.flavours.has('bounce') && !text.flavours.has('delay') && !text.flavours.has('success')) return false;
  const subject = email.subject.trim().toLowerCase().slice(0, 1000);
  const flavour = SUBJECT_PATTERNS.find((p) => p.pattern.test(subject))?.flavour;
  return flavour === 'delay' || flavour === 'success' || text.flavours.has('delay') || text.flavours.has('success');
}

/** The per-recipient `Action:` values of the delivery-status parts (RFC 3464: failed, delayed, delivered, relayed, expanded). */
function deliveryActions(parts: readonly ReportPart[]): string[] {
  const actions: string[] = [];
  for (const part of parts) {
    if (!DELIVERY_REPORT_TYPES.has(part.contentType)) continue;
    for (const line of part.text.split('\n')) {
      const match = /^action\s*:\s*([a-z]+)/i.exec(line.trim());
      if (match) actions.push(match[1]!.toLowerCase());
    }
  }
  return actions;
}

function hasFailedAction(parts: readonly ReportPart[]): boolean {
  return deliveryActions(parts).includes('failed');
}

/** "recipient: status diagnostic" of the first failed recipient in the delivery-status parts. */
function deliveryDiagnostic(parts: readonly ReportPart[]): string | null {
  for (const part of parts) {
    if (!DELIVERY_REPORT_TYPES.has(part.contentType)) continue;
    // Recipient blocks are separated by blank lines; fields may be folded.
    for (const block of unfold(part.text).split(/\n\s*\n/)) {
      const fields = fieldMap(block);
      if ((fields.get('action') ?? '').toLowerCase() !== 'failed') continue;
      const recipient = (fields.get('final-recipient') ?? fields.get('original-recipient') ?? '').replace(/^[^;]*;\s*/, '');
      const pieces = [recipient && `${recipient}:`, fields.get('status'), fields.get('diagnostic-code')].filter((p) => p);
      return pieces.join(' ').slice(0, 400) || null;
    }
  }
  return null;
}

/** The first line of the text that carries an SMTP reply or enhanced status code. */
function textDiagnostic(email: ParsedEmail): string | null {
  const source = (email.textPart ?? email.bodyText).slice(0, TEXT_SCAN_CHARS);
  for (const line of source.split('\n')) {
    if (/\b[45]\d\d\b[ -]?#?[45]\.\d{1,3}\.\d{1,3}\b|#[45]\.\d{1,3}\.\d{1,3}\b|\b[45]\.\d{1,3}\.\d{1,3}\b/.test(line))
      return line.trim().slice(0, 400);
  }
  return null;
}

/**
 * Message-IDs of the mail a report is about: the returned message or its headers, the provider's
 * own field, the report's In-Reply-To (Exchange and Gmail set it), `Original-Message-ID` fields,
 * and "Message-ID:" lines of the original quoted in the text. Never the report's own ID.
 */
function originalMessageIds(email: ParsedEmail, providerIds: readonly string[]): string[] {
  const ids: string[] = [...providerIds];
  for (const part of email.reportParts) {
    if (RETURNED_MESSAGE_TYPES.has(part.contentType)) ids.push(...idsIn(headerBlock(part.text).get('message-id') ?? ''));
    else ids.push(...idLines(part.text));
  }
  ids.push(...email.inReplyTo);
  ids.push(...idLines((email.textPart ?? email.bodyText).slice(0, TEXT_SCAN_CHARS)));
  const own = email.messageId;
  return [...new Set(ids)].filter((id) => id !== own).slice(0, MAX_ORIGINAL_IDS);
}

/** "Message-ID: <…>" (also "Original-Message-ID", "Original Message-ID", quoted with ">") anywhere in a line. */
function idLines(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const match = /(?:^|[\s>])(?:original[- ])?message-id\s*:\s*(<[^<>\s]{1,250}>)/i.exec(line);
    if (match) out.push(match[1]!);
    if (out.length >= MAX_ORIGINAL_IDS) break;
  }
  return out;
}

function idsIn(value: string): string[] {
  return [...value.matchAll(/<[^<>\s]{1,250}>/g)].map((m) => m[0]).slice(0, MAX_ORIGINAL_IDS);
}

/** The header fields of a returned message (up to its first blank line), lower-cased names, unfolded values. */
function headerBlock(text: string): Map<string, string> {
  const end = text.search(/\r?\n\r?\n/);
  return fieldMap(unfold(end === -1 ? text : text.slice(0, end)));
}

function unfold(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(/\n[ \t]+/g, ' ');
}

function fieldMap(block: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0 || colon > 80) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim());
  }
  return fields;
}

function fromAddressOf(headers: Map<string, string>): string | null {
  const from = headers.get('from');
  if (!from) return null;
  const match = /<([^<>\s]+@[^<>\s]+)>/.exec(from) ?? /([^\s<>"]+@[^\s<>"]+)/.exec(from);
  return match ? match[1]!.toLowerCase() : null;
}

function jsonPart(parts: readonly ReportPart[]): string | null {
  return parts.find((p) => p.contentType === 'application/json')?.text ?? null;
}

function header(email: ParsedEmail, name: string): string | undefined {
  return email.rawHeaders.get(name)?.[0];
}
