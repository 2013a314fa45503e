/**
 * Attachments behind a wall (issue 27, findings 1 and 12): every decompression bomb we could build
 * (test/support/bomb-files.ts: docx, xlsx, plain and nested archives, 100,000 entries, billion
 * laughs, the .docx whose central directory and local headers disagree, PDFs whose Flate, chained
 * Flate and RunLength streams decode to 400–512 MB) is read as ingestion reads it — the parse pool,
 * then the warm reader pool's real worker — in a child process whose peak RSS (the kernel's
 * high-water mark, all threads) is measured per file: each is skipped with its reason and the whole
 * process stays under `PEAK_RSS_BOUND_MB`. Before, the disagreeing .docx killed the process at 1.9 GB
 * (exit 134) and the 400 MB Flate PDF peaked at 1.55 GB. Then the bombs go through a real replay:
 * every mail is ingested, and the report names each skipped file with the reason.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailWithAttachments } from '../support/attachment-files.ts';
import { buildBombs, type Bomb } from '../support/bomb-files.ts';
import type { BombReading } from '../support/read-bombs.ts';
import { replayFiles } from '../support/replay.ts';

/**
 * The whole reading process (main thread, one parse worker, two reader workers of 256 MB heap each,
 * at the defaults) never passes this; before the wall, single files took it to 1.55–2.36 GB.
 */
const PEAK_RSS_BOUND_MB = 800;
/** Nor does one file add more than this to the RSS: the PDF decode budget (128 MB), the file's copies, V8 heap growth. */
const PER_FILE_GROWTH_BOUND_MB = 350;

const ROOT = new URL('../..', import.meta.url).pathname;
let dir: string;
let bombs: Bomb[];
let files: string[];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'attachment-bombs-'));
  bombs = await buildBombs();
  files = bombs.map((bomb, i) => {
    const file = path.join(dir, `${i}-${bomb.filename}`);
    writeFileSync(file, bomb.content);
    return file;
  });
}, 180_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What each bomb must come to, by its name in bomb-files.ts. */
const EXPECTED: Record<string, { status: string; reason: RegExp }> = {
  'docx, document.xml inflating to 1 GB': { status: 'skipped', reason: /^it inflates to more than 64 MB/ },
  'docx, central directory and local headers disagree (hidden 1 GB document.xml)': {
    status: 'skipped',
    reason: /^it inflates to more than 64 MB/,
  },
  'docx, 16 media entries of 256 MB each': { status: 'skipped', reason: /^it inflates to more than 64 MB/ },
  'xlsx, sheet1.xml inflating to 1 GB': { status: 'skipped', reason: /^it inflates to more than 64 MB/ },
  'zip of 100,000 empty entries': { status: 'skipped', reason: /^it has more than 5,000 entries/ },
  'nested archives (a zip of 10 zips of 256 MB bombs)': { status: 'skipped', reason: /^it is a ZIP archive, not a Word/ },
  'docx, billion-laughs entities in document.xml': { status: 'extracted', reason: /^$/ },
  'PDF, FlateDecode stream decoding to 400 MB': { status: 'skipped', reason: /^its streams decode to more than 128 MB/ },
  'PDF, chained FlateDecode (twice) decoding to 400 MB': { status: 'skipped', reason: /^its streams decode to more than 128 MB/ },
  'PDF, RunLengthDecode stream decoding to 512 MB': { status: 'skipped', reason: /^its streams decode to more than 128 MB/ },
};

describe('decompression bombs stay behind the wall', () => {
  it('skips each bomb with its reason while the reading process stays under the RSS bound', async () => {
    const args = bombs.flatMap((bomb, i) => [bomb.contentType, files[i]!]);
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/support/read-bombs.ts', ...args], {
      cwd: ROOT,
      timeout: 600_000,
      maxBuffer: 1024 * 1024,
    });
    const readings = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as BombReading);
    expect(readings).toHaveLength(bombs.length);
    const table = readings.map((r, i) => ({ name: bombs[i]!.name, ...r }));
    console.log(table.map((r) => `${r.name}: ${r.status}, peak ${r.peakMb} MB (from ${r.beforeMb} MB) — ${r.reason}`).join('\n'));
    for (const r of table) {
      const expected = EXPECTED[r.name]!;
      expect({ name: r.name, status: r.status, reason: r.reason }).toEqual({
        name: r.name,
        status: expected.status,
        reason: expect.stringMatching(expected.reason),
      });
      // Named in the message so a failure says which bomb broke the bound.
      expect(r.peakMb, `${r.name}: peak RSS`).toBeLessThan(PEAK_RSS_BOUND_MB);
      expect(r.peakMb - r.beforeMb, `${r.name}: RSS growth`).toBeLessThan(PER_FILE_GROWTH_BOUND_MB);
    }
  }, 600_000);

  it('ingests every mail of a replay carrying bombs, and the report names each skipped file with the reason', async () => {
    const picks = [
      'docx, central directory and local headers disagree (hidden 1 GB document.xml)',
      'PDF, FlateDecode stream decoding to 400 MB',
    ];
    const emls = picks.map((name, i) => {
      const bomb = bombs.find((b) => b.name === name)!;
      const eml = path.join(dir, `mail-${i}.eml`);
      const parts = [{ filename: bomb.filename, contentType: bomb.contentType, content: bomb.content }];
      writeFileSync(
        eml,
        mailWithAttachments({ from: `customer${i}@customer.example`, subject: `Files ${i}`, body: 'Please see the file.', parts }),
      );
      return eml;
    });
    const report = await replayFiles(emls);
    expect(report.messages.map((m) => m.outcome)).toEqual(['processed', 'processed']);
    expect(report.failures.filter((f) => f.stage === 'ingest' || f.stage === 'read')).toEqual([]);
    expect([...report.skippedAttachments].sort((a, b) => a.filename.localeCompare(b.filename))).toEqual([
      { messageId: expect.any(String), filename: 'bomb.pdf', reason: 'its streams decode to more than 128 MB (a decompression bomb?)' },
      { messageId: expect.any(String), filename: 'two-faced.docx', reason: 'it inflates to more than 64 MB (a zip bomb?)' },
    ]);
  }, 300_000);
});
