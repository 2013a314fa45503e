/**
 * Ingestion's side of "the team is who can prove it" (the rule itself is pure, in
 * src/mail/team-identity.ts): which way a message goes (the team's reply, a stranger's mail that
 * claims a team address, or neither), and which thread a team message may join (only its own
 * customer's: src/mail/team-identity.ts `threadForTeamMessage`).
 */
import { normaliseAddress } from '../mail/addresses.ts';
import { trustedDmarc } from '../mail/auth-results.ts';
import type { Classification, SkipReason } from '../mail/classify.ts';
import { verifyAgentMessageId } from '../mail/message-id.ts';
import type { ParsedEmail } from '../mail/parse-message.ts';
import { normaliseSubject } from '../mail/subject.ts';
import { bccAddresses, decideTeamMail, isTeamAddress, threadForTeamMessage } from '../mail/team-identity.ts';
import { customerAddressesOfThreads, lookupForIngest } from '../store/ingest-store.ts';
import type { IngestDeps, IngestResult, IngestSettings } from './ingest-message.ts';

export type TeamRoute =
  /** Proven the team's: stored as its reply when it threads. */
  | { kind: 'team' }
  /** Read from the Sent folder but not the team's words (a forward, a BCC copy): not stored. */
  | { kind: 'not-team'; detail: string }
  /** Claims a team address without proof: stored as a stranger's mail, skipped, for a person. */
  | { kind: 'inbound'; classification: Classification }
  /** None of the above: the classifier's verdict stands. */
  | { kind: 'other' };

/** The agent's own mail (its mark or its signed Message-ID): the classifier calls it a loop. */
function agentMarked(email: ParsedEmail, settings: IngestSettings): boolean {
  if (email.rawHeaders.get('x-support-agent') !== undefined) return true;
  return email.messageId !== null && verifyAgentMessageId(settings.messageIdSecret, email.messageId) !== null;
}

/**
 * Mail from the served address itself that the trusted server never judged (no DMARC result: an
 * internal relay, the team's own Bcc copy, or no TRUSTED_AUTHSERV_ID) stays what the classifier
 * calls it, a loop: no reply, not the team's. Judged and not passing, it is a stranger's mail.
 */
function ownCopy(email: ParsedEmail, settings: IngestSettings): boolean {
  const from = normaliseAddress(email.from?.address, { foldPlus: true });
  if (from === null || from !== normaliseAddress(settings.supportAddress, { foldPlus: true })) return false;
  return (trustedDmarc(email.rawHeaders.get('authentication-results') ?? [], settings.authservId)?.result ?? null) === null;
}

/**
 * Which way a message goes. Automated mail from a team address (a colleague's out-of-office) and
 * the agent's own mail keep the classifier's verdict; a proven team message is the team's even
 * when From is the served address (the team's reply Cc'd to itself is not a loop).
 */
export function routeTeamMail(email: ParsedEmail, settings: IngestSettings, sentByTeam: boolean, classified: Classification): TeamRoute {
  const verdict = decideTeamMail(
    {
      channel: sentByTeam ? 'sent-folder' : 'inbound',
      from: email.from?.address ?? null,
      fromFields: email.rawHeaders.get('from')?.length ?? 0,
      authenticationResults: email.rawHeaders.get('authentication-results') ?? [],
      authservId: settings.authservId,
    },
    { supportAddress: settings.supportAddress, staffAddresses: settings.staffAddresses },
  );
  if (sentByTeam) return verdict.kind === 'team' ? { kind: 'team' } : { kind: 'not-team', detail: verdict.detail ?? 'not the team’s mail' };
  if (verdict.kind === 'not-team' || agentMarked(email, settings)) return { kind: 'other' };
  if (classified.skipReason !== null && classified.skipReason !== 'loop') return { kind: 'other' };
  if (verdict.kind === 'team') return { kind: 'team' };
  if (ownCopy(email, settings)) return { kind: 'other' };
  return {
    kind: 'inbound',
    classification: { skipReason: 'unverified-team', detail: `claims to be the team, not proven: ${verdict.detail}`, report: null },
  };
}

/** A team-side message that is not stored, with the reason. */
export function teamSkip(messageId: string, text: string, at: Date, reason: SkipReason, detail: string): IngestResult {
  return {
    id: '',
    messageId,
    threadId: null,
    entityId: null,
    outcome: 'skipped',
    skipReason: reason,
    skipDetail: detail,
    text,
    stored: false,
    at,
    replyNeeded: false,
  };
}

/** At most this many recipients are looked up for their own thread. */
const MAX_RECIPIENT_LOOKUPS = 5;

/**
 * The thread a team message joins: one its headers name whose customer is a recipient; else, when
 * the headers name only other customers' threads, the recipient's own latest thread with the same
 * subject inside SUBJECT_WINDOW. `otherCustomer` says why it joined none although headers matched.
 */
export async function teamThread(
  deps: IngestDeps,
  email: ParsedEmail,
  headerIds: readonly string[],
  at: Date,
): Promise<{ threadId: string | null; otherCustomer: string | null }> {
  const { settings } = deps;
  const found = await lookupForIngest(deps.sql, {
    mailboxId: deps.mailbox.id,
    address: null,
    entityKey: null,
    headerIds,
    normalizedSubject: '',
    subjectSince: new Date(0),
  });
  const named = [...new Set(headerIds.flatMap((id) => found.matches.filter((m) => m.messageId === id).map((m) => m.threadId)))];
  if (named.length === 0) return { threadId: null, otherCustomer: null };
  const recipients = [...email.to, ...email.cc]
    .flatMap((a) => (a.address ? [a.address] : []))
    .concat(bccAddresses(email.rawHeaders.get('bcc') ?? []))
    .filter((a) => !isTeamAddress(a, settings));
  const customers = await customerAddressesOfThreads(deps.sql, named);
  const candidates = named.map((threadId) => ({ threadId, customerAddresses: customers.get(threadId) ?? [] }));
  const joined = threadForTeamMessage(candidates, recipients, settings.foldPlusAddresses);
  if (joined) return { threadId: joined, otherCustomer: null };
  for (const recipient of recipients.slice(0, MAX_RECIPIENT_LOOKUPS)) {
    const address = normaliseAddress(recipient, { foldPlus: settings.foldPlusAddresses });
    if (!address) continue;
    const own = await lookupForIngest(deps.sql, {
      mailboxId: deps.mailbox.id,
      address,
      entityKey: null,
      headerIds: [],
      normalizedSubject: normaliseSubject(email.subject),
      subjectSince: new Date(at.getTime() - settings.subjectWindowMs),
    });
    if (own.subjectMatch) return { threadId: own.subjectMatch.threadId, otherCustomer: null };
  }
  return {
    threadId: null,
    otherCustomer: `its recipients do not include the customer of thread ${named[0]} that its headers name: not joined to it`,
  };
}
