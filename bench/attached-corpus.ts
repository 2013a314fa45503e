/**
 * A corpus where every mail has an attachment (issue 25): each generated mail's sender and date, a
 * short text, and one readable file in turn — a two-page PDF, a Word document, a
 * CSV export — so that every message costs the attachment reader real reading, not an image named.
 */
import { buildDocx, buildPdf, mailWithAttachments, type MailPart } from '../test/support/attachment-files.ts';
import type { GeneratedMail } from './generate-mail.ts';

function part(n: number): MailPart {
  const lines = Array.from(
    { length: 30 },
    (_, i) => `Order ${1000 + n}-${i}: 3 x Widget Pro at 120.00 EUR, delivered to warehouse ${i % 7}`,
  );
  switch (n % 3) {
    case 0:
      return {
        filename: `invoice-${n}.pdf`,
        contentType: 'application/pdf',
        content: buildPdf([lines, lines.slice(0, 10)], `Invoice ${n}`),
      };
    case 1:
      return {
        filename: `letter-${n}.docx`,
        contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        content: buildDocx(lines),
      };
    default:
      return {
        filename: `export-${n}.csv`,
        contentType: 'text/csv',
        content: Buffer.from(`order,qty,note\n${lines.map((l, i) => `${n}-${i},3,"${l}"`).join('\n')}\n`),
      };
  }
}

/** The corpus again, each mail with one attachment (its sender and date, a Message-ID of its own). */
export function withAttachments(corpus: readonly GeneratedMail[]): GeneratedMail[] {
  return corpus.map((mail) => {
    // A Message-ID of its own: the generated mail may have been ingested already.
    const messageId = `<attached.${mail.messageId.slice(1)}`;
    const raw = mailWithAttachments({
      from: mail.fromAddress,
      subject: `Order question ${mail.index}`,
      body: `Hello, please see the attached file about my order ${1000 + mail.index}. Thanks.`,
      parts: [part(mail.index)],
    })
      .replace(/^Date: .*$/m, `Date: ${mail.date.toUTCString()}`)
      .replace(/^Message-ID: .*$/m, `Message-ID: ${messageId}`);
    return { ...mail, raw: Buffer.from(raw), messageId, kind: 'customer', shape: { html: 'none', attachments: 1 } };
  });
}
