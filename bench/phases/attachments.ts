/**
 * Attachments: the time and peak RSS of reading the largest attachments the defaults allow
 * (ATTACHMENT_MAX_BYTES, 10 MiB): a PDF of that size (only its first ATTACHMENT_MAX_PDF_PAGES pages
 * are read), a CSV of one 10 MiB line, and a zip-bomb .docx, each parsed out of a mail and read in
 * its worker thread as ingestion does (`readAttachments`). The RSS is the whole process's, so it
 * includes the worker threads.
 */
import { DEFAULT_ATTACHMENT_SETTINGS, attachmentFileLimits, readAttachments } from '../../src/ingest/attachment-text.ts';
import { MAX_INFLATED_BYTES } from '../../src/ingest/attachment-zip.ts';
import { readMessage } from '../../src/ingest/read-message.ts';
import { buildDocx, buildPdf, mailWithAttachments, type MailPart } from '../../test/support/attachment-files.ts';
import type { PhaseContext } from '../phase-process.ts';
import { figure, megabytes, round, type Figure, type PhaseResult } from '../report.ts';
import { RssSampler, settle } from '../rss.ts';

const MAX = DEFAULT_ATTACHMENT_SETTINGS.maxBytes;

function largestPdf(): Buffer {
  const line = 'Invoice line 0000: 3 x Widget Pro at 120.00 EUR, delivery to warehouse 7, reference RF18 5390 0754';
  const pages = (count: number) => Array.from({ length: count }, (_, n) => Array.from({ length: 40 }, (_, i) => `${line} p${n} l${i}`));
  // Sized from a sample to just under the cap (the PDF grows linearly with its pages).
  const sample = buildPdf(pages(100)).length;
  return buildPdf(pages(Math.floor((100 * (MAX - 512 * 1024)) / sample)), 'Largest allowed PDF');
}

async function measure(ctx: PhaseContext, name: string, part: MailPart): Promise<{ ms: number; peakMb: number; status: string }> {
  const raw = Buffer.from(mailWithAttachments({ body: 'see attached', parts: [part] }));
  await settle();
  const sampler = new RssSampler(10);
  sampler.start();
  const before = sampler.sample();
  const started = performance.now();
  const read = await readMessage(raw, attachmentFileLimits(DEFAULT_ATTACHMENT_SETTINGS));
  if (!read.parsed.ok) throw new Error(`${name}: ${read.parsed.reason}`);
  const result = await readAttachments(read.parsed.email, DEFAULT_ATTACHMENT_SETTINGS);
  const ms = performance.now() - started;
  const { peakBytes } = sampler.stop();
  const e = result.attachments[0]?.extraction;
  const status = `${e?.status ?? '?'} ${e?.kind ?? ''}${e?.reason ? ` (${e.reason})` : ''}`;
  ctx.log(`${name}: ${round(ms)} ms, peak +${round(megabytes(peakBytes - before))} MB: ${status}`);
  return { ms, peakMb: megabytes(peakBytes - before), status };
}

export async function runAttachments(ctx: PhaseContext): Promise<PhaseResult> {
  const pdf = largestPdf();
  const cases: Array<[string, MailPart]> = [
    [`PDF of ${round(megabytes(pdf.length))} MB`, { filename: 'largest.pdf', contentType: 'application/pdf', content: pdf }],
    ['CSV of one 10 MB line', { filename: 'one-line.csv', contentType: 'text/csv', content: Buffer.alloc(MAX - 1024, 0x61) }],
    [
      `zip-bomb docx (inflates past ${MAX_INFLATED_BYTES / 1024 / 1024} MB)`,
      {
        filename: 'bomb.docx',
        contentType: 'application/octet-stream',
        content: buildDocx(['x'], { 'word/media/pad.bin': [new Uint8Array(MAX_INFLATED_BYTES * 4), { level: 1 }] }),
      },
    ],
  ];
  const figures: Figure[] = [];
  const notes: Record<string, string> = {};
  for (const [name, part] of cases) {
    const m = await measure(ctx, name, part);
    notes[name] = m.status;
    figures.push(
      figure({
        name: `attachment read: ${name}, time`,
        value: m.ms,
        unit: 'ms',
        baseline: DEFAULT_ATTACHMENT_SETTINGS.timeoutMs,
        target: `< ATTACHMENT_TIMEOUT (${DEFAULT_ATTACHMENT_SETTINGS.timeoutMs} ms)`,
        met: m.ms < DEFAULT_ATTACHMENT_SETTINGS.timeoutMs,
        notes: m.status,
      }),
      figure({
        name: `attachment read: ${name}, peak RSS growth`,
        value: m.peakMb,
        unit: 'MB',
        baseline: null,
        target: `< 2 x ATTACHMENT_WORKER_MEMORY (${DEFAULT_ATTACHMENT_SETTINGS.memoryMb} MB) + the file`,
        met: m.peakMb < 2 * DEFAULT_ATTACHMENT_SETTINGS.memoryMb + megabytes(part.content.length) * 3,
      }),
    );
  }
  return { figures, inputs: { settings: DEFAULT_ATTACHMENT_SETTINGS, pdfBytes: pdf.length, outcomes: notes } };
}
