import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERASURE_COLUMNS } from '../../src/store/erasure.ts';

/** Every String, Json and Bytes column of the schema, as `Model.field`. */
function textColumnsOfSchema(): string[] {
  const schema = readFileSync(path.resolve(import.meta.dirname, '../../prisma/schema.prisma'), 'utf8');
  const columns: string[] = [];
  let model: string | null = null;
  for (const line of schema.split('\n')) {
    const start = /^model\s+(\w+)\s*\{/.exec(line);
    if (start) {
      model = start[1]!;
      continue;
    }
    if (/^\}/.test(line)) {
      model = null;
      continue;
    }
    const field = /^\s+(\w+)\s+(String|Json|Bytes)(\?|\[\])?(\s|$)/.exec(line);
    if (model && field) columns.push(`${model}.${field[1]}`);
  }
  return columns.sort();
}

describe('erasure covers the schema', () => {
  it('every text, JSON and bytes column is listed with what erasure does with it', () => {
    const schema = textColumnsOfSchema();
    expect(schema.length).toBeGreaterThan(100);
    const listed = ERASURE_COLUMNS.map((c) => `${c.table}.${c.column}`).sort();
    // A new column must be added to ERASURE_COLUMNS (src/store/erasure.ts): redacted, or exempt with a reason.
    expect(schema.filter((c) => !listed.includes(c))).toEqual([]);
    expect(listed.filter((c) => !schema.includes(c))).toEqual([]);
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('an exempt column says why; the columns customers write into are redacted', () => {
    for (const c of ERASURE_COLUMNS) if (c.treatment === 'exempt') expect(c.why, `${c.table}.${c.column}`).toBeTruthy();
    const redacted = ERASURE_COLUMNS.filter((c) => c.treatment !== 'exempt').map((c) => `${c.table}.${c.column}`);
    expect(redacted).toEqual(
      expect.arrayContaining([
        'ProfileFact.value',
        'ProfileFact.evidence',
        'PromotionDecision.value',
        'PromotionDecision.evidence',
        'PromotionDecision.reason',
        'Message.subject',
        'Message.bodyText',
        'Message.extractedText',
        'Message.fromName',
        'Message.toAddresses',
        'Message.ccAddresses',
        'Message.replyTo',
        'Message.skipDetail',
        'Message.attachments',
        'MessageRaw.raw',
        'Thread.subject',
        'Thread.normalizedSubject',
        'Thread.summary',
        'Thread.openItems',
        'Thread.currentIntent',
        'Thread.tags',
        'Thread.topic',
        'Draft.toAddress',
        'Draft.subject',
        'Draft.body',
        'Draft.error',
        'Turn.prompt',
        'Turn.error',
        'Commitment.text',
        'PromotionRun.topic',
        'ThreadParticipant.address',
        'EntityAddress.displayName',
        'Entity.name',
        'Mailbox.pollerLastError',
      ]),
    );
  });
});
