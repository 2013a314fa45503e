/**
 * The note a prompt carries next to a customer's email whose sensitive values were masked at
 * ingestion (src/ingest/mask-message.ts): what kind of value the customer sent, that the model must
 * never repeat or ask for one, and, for card details and credentials, that the reply must tell the
 * customer not to send them by email. The kinds are read back from the placeholders in the stored
 * text, so no extra column is needed. Pure.
 */
import { maskedKindsIn, type SensitiveKind } from '../mail/sensitive-values.ts';

const NAMES: Record<SensitiveKind, string> = {
  card: 'a payment card number',
  cvv: 'a card security code (CVV)',
  iban: 'a bank account number (IBAN)',
  password: 'a password or PIN',
  'one-time-code': 'a one-time or verification code',
  'national-id': 'a national identification number',
};

/** The kinds whose reply must tell the customer not to send them by email. */
export const CARD_KINDS: readonly SensitiveKind[] = ['card', 'cvv'];
export const CREDENTIAL_KINDS: readonly SensitiveKind[] = ['password', 'one-time-code'];

/** The kinds masked in a customer's email (its new text and its attachments' text). */
export function sensitiveKindsOf(email: { text: string; attachmentText?: string }): SensitiveKind[] {
  return maskedKindsIn(`${email.text}\n${email.attachmentText ?? ''}`);
}

/** The note for the prompt, or null when nothing was masked. */
export function sensitiveNote(kinds: readonly SensitiveKind[]): string | null {
  if (kinds.length === 0) return null;
  const lines = [
    `NOTE: the customer sent ${kinds.map((k) => NAMES[k]).join(', ')} in this email. It was masked before you saw it (shown as a bracketed placeholder such as [card •••• 4242]). Never repeat it, ask for it again or ask for any other card number, security code, password or code.`,
  ];
  if (kinds.some((k) => CARD_KINDS.includes(k)))
    lines.push(
      'Tell the customer plainly, in their language, not to send card numbers or security codes by email; we never need them by email.',
    );
  if (kinds.some((k) => CREDENTIAL_KINDS.includes(k)))
    lines.push('Tell the customer never to share passwords or codes by email, and to change a password they sent.');
  return lines.join(' ');
}
