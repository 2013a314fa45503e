/**
 * The mailboxes file checked as a whole, not one mailbox at a time. Two mailboxes that log in to
 * the same IMAP account (host, port and user) and read the same folder would each take every mail
 * in it: two replies to one customer (support@ and support+billing@ delivered into one INBOX). And
 * a folder one mailbox reads as its inbox must not be another's (or its own) Sent or Drafts
 * folder: the team's replies and the agent's drafts would come back as customer mail.
 *
 * Folder names are compared as IMAP does: INBOX in any case is the inbox (RFC 3501 section 5.1),
 * every other name exactly. Sent and Drafts left to `auto` are found by their special-use flags
 * when the mailbox connects, so only names written in the file can be checked here.
 */

/** What the check needs of one mailbox. */
export interface MailboxLogin {
  /** How errors name it: `mailboxes[1] (billing@acme.example)`. */
  label: string;
  host: string | undefined;
  port: number;
  user: string | undefined;
  inbox: readonly string[];
  /** A folder path, `auto` or `none`. */
  sent: string;
  /** A folder path or `auto`. */
  drafts: string;
}

function folderKey(name: string): string {
  const trimmed = name.trim();
  return trimmed.toUpperCase() === 'INBOX' ? 'INBOX' : trimmed;
}

/** One IMAP account: host names and logins compare without case (servers treat them so). */
function accountKey(m: MailboxLogin): string | null {
  if (!m.host || !m.user) return null;
  return `${m.host.trim().toLowerCase()}:${m.port}:${m.user.trim().toLowerCase()}`;
}

/** The first problem of the mailboxes taken together, as one line naming both mailboxes; null when none. */
export function mailboxOverlap(mailboxes: readonly MailboxLogin[]): string | null {
  const readers = new Map<string, MailboxLogin>();
  for (const m of mailboxes) {
    const account = accountKey(m);
    if (account === null) continue;
    for (const folder of m.inbox.map(folderKey)) {
      const key = `${account}\u0000${folder}`;
      const other = readers.get(key);
      if (other === m) return `${m.label} lists the IMAP folder ${folder} twice: every mail in it would be answered twice.`;
      if (other)
        return (
          `${m.label} reads the IMAP folder ${folder} of user ${m.user} on ${m.host}:${m.port}, which ${other.label} already reads: ` +
          'every mail in it would be answered twice. Serve one IMAP folder from one mailbox only.'
        );
      readers.set(key, m);
    }
  }
  for (const m of mailboxes) {
    const account = accountKey(m);
    if (account === null) continue;
    for (const [kind, folder] of [
      ['Sent', m.sent],
      ['Drafts', m.drafts],
    ] as const) {
      if (folder === 'auto' || folder === 'none') continue;
      const reader = readers.get(`${account}\u0000${folderKey(folder)}`);
      if (!reader) continue;
      const whose = reader === m ? 'its own' : `${m.label}'s`;
      return (
        `${reader.label} reads ${folderKey(folder)} as its inbox, but that folder is ${whose} ${kind} folder: ` +
        `the ${kind === 'Sent' ? "team's sent replies" : "agent's drafts"} would come back as customer mail. Read it as one or the other.`
      );
    }
  }
  return null;
}
