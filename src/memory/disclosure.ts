/**
 * Whether a turn may see the customer's profile and thread notes. A sender who failed DMARC at the
 * operator's own server may be anyone; a Reply-To on another domain sends our answer somewhere
 * else. Either way the context holds only their own email, unless DMARC passed. Pure.
 */
import { domainOf } from '../mail/addresses.ts';

export interface SenderEvidence {
  fromAddress: string;
  replyTo: string | null;
  authDmarc: string | null;
}

export function withheldReason(emails: readonly SenderEvidence[]): string | null {
  if (emails.some((e) => e.authDmarc === 'fail')) return 'the sender failed DMARC';
  const redirected = emails.some(
    (e) => e.replyTo !== null && e.fromAddress.includes('@') && domainOf(e.replyTo) !== domainOf(e.fromAddress) && e.authDmarc !== 'pass',
  );
  if (redirected) return 'Reply-To points to another domain and DMARC did not pass';
  return null;
}
