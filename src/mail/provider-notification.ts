/**
 * Sending providers' bounce and complaint notifications that arrive as mail with a JSON body:
 * Amazon SES through an SNS email subscription (the bare notification, or the whole SNS envelope
 * for "email-json"), and SendGrid, Mailgun, Postmark, Mandrill and SparkPost webhook events that
 * a relay forwards as mail. Only a body that is JSON and nothing else counts (a developer pasting a
 * payload into a question writes prose around it). Pure; every shape is checked with zod.
 */
import { z } from 'zod';

/** What a provider notification says. */
export interface ProviderNotification {
  provider: 'amazon-ses' | 'sendgrid' | 'mailgun' | 'postmark' | 'mandrill' | 'sparkpost';
  kind: 'bounce' | 'complaint';
  /** True when delivery failed for good; false for delays, deliveries and complaints. */
  failed: boolean;
  /** The event in the provider's words, e.g. "Bounce Permanent/General", "failed (temporary)". */
  event: string;
  /** RFC 5322 Message-IDs of the mail the event is about (with angle brackets); provider-internal IDs are not. */
  messageIds: string[];
  /** Recipient, status and diagnostic, when the provider gives them. */
  diagnostic: string | null;
}

/** JSON bodies larger than this are not a provider notification (SES caps its own at 256 KB). */
const MAX_JSON_CHARS = 256 * 1024;
const MAX_EVENTS = 50;

// SNS appends this to the notification it mails to an "email" subscription.
const SNS_FOOTER = /\n--\s*\nIf you wish to stop receiving notifications from this topic/;

const str = z.string().max(10_000);
const sesHeader = z.object({ name: str, value: str });
const sesMail = z
  .object({
    messageId: str.optional(),
    commonHeaders: z.object({ messageId: str.optional() }).passthrough().optional(),
    headers: z.array(sesHeader).max(500).optional(),
  })
  .passthrough();
const sesRecipient = z
  .object({ emailAddress: str.optional(), status: str.optional(), diagnosticCode: str.optional(), action: str.optional() })
  .passthrough();
const sesNotification = z
  .object({
    notificationType: str.optional(),
    eventType: str.optional(),
    mail: sesMail,
    bounce: z
      .object({
        bounceType: str.optional(),
        bounceSubType: str.optional(),
        bouncedRecipients: z.array(sesRecipient).max(MAX_EVENTS).optional(),
      })
      .passthrough()
      .optional(),
    complaint: z.object({ complaintFeedbackType: str.optional() }).passthrough().optional(),
  })
  .passthrough();
const snsEnvelope = z.object({ Type: z.literal('Notification'), Message: z.string().max(MAX_JSON_CHARS) }).passthrough();

const sendgridEvent = z
  .object({
    event: str,
    email: str.optional(),
    'smtp-id': str.optional(),
    reason: str.optional(),
    status: str.optional(),
    sg_event_id: str.optional(),
    sg_message_id: str.optional(),
  })
  .passthrough();

const mailgunPayload = z
  .object({
    'event-data': z
      .object({
        event: str,
        severity: str.optional(),
        recipient: str.optional(),
        'delivery-status': z
          .object({ code: z.union([z.number(), str]).optional(), message: str.optional(), description: str.optional() })
          .passthrough()
          .optional(),
        message: z
          .object({ headers: z.record(z.string(), z.unknown()).optional() })
          .passthrough()
          .optional(),
      })
      .passthrough(),
  })
  .passthrough();

const postmarkRecord = z
  .object({
    RecordType: z.enum(['Bounce', 'SpamComplaint']),
    Type: str.optional(),
    MessageID: str,
    Email: str.optional(),
    Details: str.optional(),
    Description: str.optional(),
  })
  .passthrough();

const mandrillEvent = z
  .object({
    event: str,
    msg: z
      .object({
        email: str.optional(),
        diag: str.optional(),
        bounce_description: str.optional(),
        headers: z.record(z.string(), z.unknown()).optional(),
      })
      .passthrough(),
  })
  .passthrough();

const sparkpostEvent = z
  .object({
    msys: z
      .object({
        message_event: z
          .object({ type: str, rcpt_to: str.optional(), raw_reason: str.optional(), reason: str.optional() })
          .passthrough()
          .optional(),
      })
      .passthrough(),
  })
  .passthrough();

/** Reads a whole-body JSON notification; null when the text is not one. */
export function readProviderNotification(text: string | null): ProviderNotification | null {
  const body = jsonBody(text);
  if (body === null) return null;
  const json = parseJson(body) ?? parseJson(unwrapLines(body));
  if (json === undefined) return sesByShape(body);
  return fromSns(json) ?? fromSes(json) ?? fromMailgun(json) ?? fromPostmark(json) ?? fromEvents(json) ?? sesByShape(body);
}

/** The body without SNS's unsubscribe footer, when it is a JSON object or array and nothing else. */
function jsonBody(text: string | null): string | null {
  if (!text || text.length > MAX_JSON_CHARS + 4096) return null;
  let body = text.replace(/\r\n?/g, '\n');
  const footer = SNS_FOOTER.exec(body);
  if (footer) body = body.slice(0, footer.index);
  body = body.trim();
  // Mandrill posts its events as a form field; relays forward the field as it came.
  if (body.startsWith('mandrill_events=')) body = body.slice('mandrill_events='.length);
  if (!(body.startsWith('{') || body.startsWith('[')) || !(body.endsWith('}') || body.endsWith(']'))) return null;
  return body.length > MAX_JSON_CHARS ? null : body;
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * JSON whose long lines an MTA broke on the way: sendmail splits lines over 990 octets with
 * "!\n " (RFC 5321's line limit), others break at a fixed width. Removing the breaks restores it.
 */
function unwrapLines(body: string): string {
  return body.replace(/!\n /g, '').replace(/\n/g, '');
}

// The SES notification's own fields, as raw text (escaped inside an SNS envelope's "Message").
const SES_TYPE = /\\?"(?:notificationType|eventType)\\?"\s{0,4}:\s{0,4}\\?"(Bounce|Complaint|Reject|Delivery|DeliveryDelay)\\?"/;
const SES_MAIL = /\\?"mail\\?"\s{0,4}:\s{0,4}\{/;

/**
 * An SES notification that does not parse (cut short, mangled by a relay) still has its shape: a
 * JSON body with SES's "notificationType" and "mail" fields. Recognised by that shape alone, with
 * no Message-IDs or diagnostic.
 */
function sesByShape(body: string): ProviderNotification | null {
  const type = SES_TYPE.exec(body)?.[1];
  if (!type || !SES_MAIL.test(body)) return null;
  if (type === 'Complaint')
    return { provider: 'amazon-ses', kind: 'complaint', failed: false, event: 'Complaint', messageIds: [], diagnostic: null };
  const failed = type === 'Bounce' || type === 'Reject';
  return { provider: 'amazon-ses', kind: 'bounce', failed, event: `${type} (unparsed JSON)`, messageIds: [], diagnostic: null };
}

function fromSns(json: unknown): ProviderNotification | null {
  const envelope = snsEnvelope.safeParse(json);
  if (!envelope.success) return null;
  try {
    return fromSes(JSON.parse(envelope.data.Message) as unknown);
  } catch {
    return null;
  }
}

function fromSes(json: unknown): ProviderNotification | null {
  const parsed = sesNotification.safeParse(json);
  if (!parsed.success) return null;
  const n = parsed.data;
  const type = (n.notificationType ?? n.eventType ?? '').toLowerCase();
  const messageIds = bracketed([
    n.mail.commonHeaders?.messageId,
    ...(n.mail.headers ?? []).filter((h) => h.name.toLowerCase() === 'message-id').map((h) => h.value),
  ]);
  if (type === 'complaint') {
    return {
      provider: 'amazon-ses',
      kind: 'complaint',
      failed: false,
      event: `Complaint ${n.complaint?.complaintFeedbackType ?? ''}`.trim(),
      messageIds,
      diagnostic: null,
    };
  }
  if (!['bounce', 'delivery', 'deliverydelay', 'reject'].includes(type)) return null;
  const first = n.bounce?.bouncedRecipients?.[0];
  const diagnostic = first ? [first.emailAddress, first.status, first.diagnosticCode].filter((p) => p).join(' ') || null : null;
  const event =
    type === 'bounce'
      ? `Bounce ${n.bounce?.bounceType ?? ''}/${n.bounce?.bounceSubType ?? ''}`
      : (n.notificationType ?? n.eventType ?? type);
  // SES reports a bounce once it has stopped trying (transient bounces included); Delivery and
  // DeliveryDelay are not failures.
  return { provider: 'amazon-ses', kind: 'bounce', failed: type === 'bounce' || type === 'reject', event, messageIds, diagnostic };
}

function fromMailgun(json: unknown): ProviderNotification | null {
  const parsed = mailgunPayload.safeParse(json);
  if (!parsed.success) return null;
  const e = parsed.data['event-data'];
  const headers = e.message?.headers ?? {};
  const messageIds = bracketed([headerValue(headers, 'message-id')]);
  if (e.event === 'complained')
    return { provider: 'mailgun', kind: 'complaint', failed: false, event: 'complained', messageIds, diagnostic: null };
  if (e.event !== 'failed' && e.event !== 'rejected') return null;
  const status = e['delivery-status'];
  const diagnostic =
    [e.recipient, status?.code, status?.message ?? status?.description].filter((p) => p !== undefined && p !== '').join(' ') || null;
  return {
    provider: 'mailgun',
    kind: 'bounce',
    failed: e.event === 'rejected' || e.severity !== 'temporary',
    event: `${e.event}${e.severity ? ` (${e.severity})` : ''}`,
    messageIds,
    diagnostic,
  };
}

const POSTMARK_FINAL = new Set(
  ['hardbounce', 'badEmailaddress', 'manuallydeactivated', 'spamnotification', 'blocked', 'dmarcpolicy', 'dnserror', 'unknown'].map((t) =>
    t.toLowerCase(),
  ),
);

function fromPostmark(json: unknown): ProviderNotification | null {
  const parsed = postmarkRecord.safeParse(json);
  if (!parsed.success) return null;
  const r = parsed.data;
  const type = (r.Type ?? '').toLowerCase();
  const diagnostic = [r.Email, r.Details ?? r.Description].filter((p) => p).join(' ') || null;
  // Postmark's MessageID is its own identifier, not the mail's Message-ID header.
  if (r.RecordType === 'SpamComplaint' || type === 'spamcomplaint') {
    return { provider: 'postmark', kind: 'complaint', failed: false, event: r.Type ?? r.RecordType, messageIds: [], diagnostic };
  }
  return { provider: 'postmark', kind: 'bounce', failed: POSTMARK_FINAL.has(type), event: r.Type ?? 'Bounce', messageIds: [], diagnostic };
}

const SENDGRID = { bounce: 'failed', dropped: 'failed', blocked: 'failed', deferred: 'delayed', spamreport: 'complaint' } as const;
const MANDRILL = { hard_bounce: 'failed', reject: 'failed', soft_bounce: 'delayed', spam: 'complaint' } as const;
const SPARKPOST = {
  bounce: 'failed',
  out_of_band: 'failed',
  policy_rejection: 'failed',
  delay: 'delayed',
  spam_complaint: 'complaint',
} as const;

/** SendGrid, Mandrill and SparkPost post arrays of events; the first recognised one decides. */
function fromEvents(json: unknown): ProviderNotification | null {
  const events = (Array.isArray(json) ? json : [json]).slice(0, MAX_EVENTS);
  for (const item of events) {
    const sendgrid = sendgridEvent.safeParse(item);
    if (sendgrid.success && (sendgrid.data.sg_event_id || sendgrid.data.sg_message_id) && sendgrid.data.event in SENDGRID) {
      const e = sendgrid.data;
      return outcome('sendgrid', SENDGRID[e.event as keyof typeof SENDGRID], e.event, bracketed([e['smtp-id']]), [
        e.email,
        e.status,
        e.reason,
      ]);
    }
    const mandrill = mandrillEvent.safeParse(item);
    if (mandrill.success && mandrill.data.event in MANDRILL) {
      const e = mandrill.data;
      const headers = e.msg.headers ?? {};
      return outcome('mandrill', MANDRILL[e.event as keyof typeof MANDRILL], e.event, bracketed([headerValue(headers, 'message-id')]), [
        e.msg.email,
        e.msg.bounce_description,
        e.msg.diag,
      ]);
    }
    const sparkpost = sparkpostEvent.safeParse(item);
    const event = sparkpost.success ? sparkpost.data.msys.message_event : undefined;
    if (event && event.type in SPARKPOST) {
      // SparkPost's message_id is its own; the mail's Message-ID is not in the event.
      return outcome(
        'sparkpost',
        SPARKPOST[event.type as keyof typeof SPARKPOST],
        event.type,
        [],
        [event.rcpt_to, event.raw_reason ?? event.reason],
      );
    }
  }
  return null;
}

function outcome(
  provider: ProviderNotification['provider'],
  verdict: 'failed' | 'delayed' | 'complaint',
  event: string,
  messageIds: string[],
  parts: Array<string | undefined>,
): ProviderNotification {
  return {
    provider,
    kind: verdict === 'complaint' ? 'complaint' : 'bounce',
    failed: verdict === 'failed',
    event,
    messageIds,
    diagnostic: verdict === 'complaint' ? null : parts.filter((p) => p).join(' ') || null,
  };
}

function headerValue(headers: Record<string, unknown>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && typeof value === 'string') return value;
  }
  return undefined;
}

/** Message-IDs as `<id>`, whether the provider wrote the brackets or not; junk is dropped. */
function bracketed(values: Array<string | undefined>): string[] {
  const out: string[] = [];
  for (const value of values) {
    if (!value) continue;
    const inner = value.trim().replace(/^<|>$/g, '');
    if (/^[^<>\s]{1,250}@[^<>\s@]{1,250}$/.test(inner)) out.push(`<${inner}>`);
  }
  return [...new Set(out)];
}
