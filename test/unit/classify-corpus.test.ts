/**
 * The automated-mail corpus (fixtures/emails/automated) and its normal look-alikes
 * (fixtures/emails/normal-lookalikes) through the real parser and classifier. Prints the recall per
 * kind, source (MTA, provider, client) and language, so the figure stays visible, and asserts it is
 * 100 % with no normal mail skipped; the bounced mail's original Message-IDs must be found too.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { classifyEmail, type Classification } from '../../src/mail/classify.ts';
import { parseRawEmail, type ParseOutcome } from '../../src/mail/parse-message.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/emails');

const automatedSchema = z.object({
  supportAddress: z.string(),
  messages: z.array(
    z.object({
      file: z.string(),
      kind: z.enum(['dsn', 'dsn-text', 'complaint', 'provider', 'list-manager', 'carrier', 'sender']),
      source: z.string(),
      language: z.string(),
      skipReason: z.enum(['bounce', 'complaint', 'mailing-list', 'auto-reply']),
      bouncedMessageIds: z.array(z.string()),
      /** A failure that marks the draft bounced (true), a delay or success notice (false), or neither (null). */
      permanent: z.boolean().nullable(),
      lenient: z.string().optional(),
    }),
  ),
});

const normalSchema = z.object({
  supportAddress: z.string(),
  messages: z.array(
    z.object({
      file: z.string(),
      resembles: z.string(),
      source: z.string(),
      language: z.string(),
      skipReason: z.null(),
      why: z.string(),
      lenient: z.string().optional(),
    }),
  ),
});

type Automated = z.infer<typeof automatedSchema>['messages'][number];
type Normal = z.infer<typeof normalSchema>['messages'][number];

interface Outcome {
  parsed: ParseOutcome;
  classification: Classification | null;
}

const agent = (supportAddress: string) => ({ supportAddress, isAgentMessageId: () => false });

async function run(folder: string, file: string, supportAddress: string): Promise<Outcome> {
  const parsed = await parseRawEmail(await readFile(path.join(FIXTURES, folder, file)));
  return { parsed, classification: parsed.ok ? classifyEmail(parsed.email, agent(supportAddress)) : null };
}

function recallTable(title: string, rows: Array<{ groups: Record<string, string>; hit: boolean }>): string {
  const lines = [title];
  for (const dimension of Object.keys(rows[0]?.groups ?? {})) {
    const by = new Map<string, { n: number; hit: number }>();
    for (const row of rows) {
      const key = row.groups[dimension] ?? '?';
      const entry = by.get(key) ?? { n: 0, hit: 0 };
      entry.n++;
      if (row.hit) entry.hit++;
      by.set(key, entry);
    }
    const cells = [...by].sort(([a], [b]) => a.localeCompare(b)).map(([key, e]) => `${key} ${e.hit}/${e.n}`);
    lines.push(`  per ${dimension}: ${cells.join(', ')}`);
  }
  const hits = rows.filter((r) => r.hit).length;
  lines.push(`  overall: ${hits}/${rows.length} (${((100 * hits) / Math.max(rows.length, 1)).toFixed(1)} %)`);
  return lines.join('\n');
}

let automated: Automated[];
let normal: Normal[];
const automatedOutcomes = new Map<string, Outcome>();
const normalOutcomes = new Map<string, Outcome>();

beforeAll(async () => {
  const a = automatedSchema.parse(JSON.parse(await readFile(path.join(FIXTURES, 'automated/expected.json'), 'utf8')));
  const n = normalSchema.parse(JSON.parse(await readFile(path.join(FIXTURES, 'normal-lookalikes/expected.json'), 'utf8')));
  automated = a.messages;
  normal = n.messages;
  for (const m of automated) automatedOutcomes.set(m.file, await run('automated', m.file, a.supportAddress));
  for (const m of normal) normalOutcomes.set(m.file, await run('normal-lookalikes', m.file, n.supportAddress));

  const reasonOf = (o: Outcome | undefined) => (o?.parsed.ok ? (o.classification?.skipReason ?? null) : 'malformed');
  console.log(
    [
      recallTable(
        'Automated mail recall (skipped with the expected reason):',
        automated.map((m) => ({
          groups: { kind: m.kind, source: m.source, language: m.language },
          hit: reasonOf(automatedOutcomes.get(m.file)) === m.skipReason,
        })),
      ),
      recallTable(
        'Automated mail never answered (skipped for any reason):',
        automated.map((m) => ({ groups: { kind: m.kind }, hit: reasonOf(automatedOutcomes.get(m.file)) !== null })),
      ),
      recallTable(
        'Normal look-alikes answered (not skipped):',
        normal.map((m) => ({ groups: { source: m.source, language: m.language }, hit: reasonOf(normalOutcomes.get(m.file)) === null })),
      ),
    ].join('\n'),
  );
});

describe('the automated-mail corpus', () => {
  it('is big and varied enough to mean something', () => {
    expect(automated.length).toBeGreaterThanOrEqual(80);
    expect(normal.length).toBeGreaterThanOrEqual(60);
    expect(new Set(automated.map((m) => m.kind)).size).toBe(7);
    expect(new Set(automated.map((m) => m.language)).size).toBeGreaterThanOrEqual(10);
    expect(new Set(automated.map((m) => m.source)).size).toBeGreaterThanOrEqual(30);
  });

  it('skips every automated mail with the expected reason (100 % recall)', () => {
    const misses = automated
      .map((m) => {
        const o = automatedOutcomes.get(m.file)!;
        const actual = o.parsed.ok ? (o.classification?.skipReason ?? null) : `malformed (${o.parsed.reason})`;
        return { file: m.file, expected: m.skipReason, actual, detail: o.classification?.detail ?? null };
      })
      .filter((r) => r.actual !== r.expected);
    expect(misses).toEqual([]);
  });

  it('records the signal that decided in the detail', () => {
    for (const m of automated) expect(automatedOutcomes.get(m.file)!.classification?.detail, m.file).toMatch(/\S/);
  });

  it("finds the bounced mail's original Message-IDs", () => {
    const wrong = automated
      .map((m) => ({
        file: m.file,
        expected: [...m.bouncedMessageIds].sort(),
        actual: [...(automatedOutcomes.get(m.file)!.classification?.report?.originalMessageIds ?? [])].sort(),
      }))
      .filter((r) => JSON.stringify(r.expected) !== JSON.stringify(r.actual));
    expect(wrong).toEqual([]);
  });

  it('tells a failure (the draft is marked bounced) from a delay or success notice', () => {
    const wrong = automated
      .filter((m) => m.permanent !== null)
      .map((m) => ({ file: m.file, expected: m.permanent, actual: automatedOutcomes.get(m.file)!.classification?.report?.failed ?? null }))
      .filter((r) => r.expected !== r.actual);
    expect(wrong).toEqual([]);
  });

  it('records what lenient header parsing repaired', () => {
    const lenient = [...automated, ...normal].filter((m) => m.lenient);
    expect(lenient.length).toBeGreaterThanOrEqual(8);
    for (const m of lenient) {
      const o = automatedOutcomes.get(m.file) ?? normalOutcomes.get(m.file)!;
      expect(o.parsed.ok, m.file).toBe(true);
      if (o.parsed.ok) expect(o.parsed.email.repairs.length, m.file).toBeGreaterThan(0);
    }
    for (const m of [...automated, ...normal].filter((x) => !x.lenient)) {
      const o = automatedOutcomes.get(m.file) ?? normalOutcomes.get(m.file)!;
      if (o.parsed.ok) expect(o.parsed.email.repairs, m.file).toEqual([]);
    }
  });
});

describe('normal look-alikes', () => {
  it('are all answered: no normal mail is skipped', () => {
    const skipped = normal
      .map((m) => {
        const o = normalOutcomes.get(m.file)!;
        return {
          file: m.file,
          actual: o.parsed.ok ? (o.classification?.skipReason ?? null) : `malformed (${o.parsed.reason})`,
          detail: o.classification?.detail ?? null,
        };
      })
      .filter((r) => r.actual !== null);
    expect(skipped).toEqual([]);
  });
});
