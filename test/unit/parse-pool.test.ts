/**
 * The parse pool: real worker threads reading real mail, and a stand-in worker that hangs, exhausts
 * its memory, exits or throws, to prove that each of those costs one message (kept with a reason)
 * and never the process or the messages after it. No timing assertions: the per-message timeout
 * under test is the pool's own, and the order in which answers arrive is what is checked.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ParsePool, type ParseSettings } from '../../src/ingest/parse-pool.ts';
import { MAX_BODY_TEXT_CHARS, MAX_NEW_TEXT_CHARS } from '../../src/ingest/read-message.ts';
import { createLogger, silentLogger } from '../../src/logger.ts';

const STAND_IN = new URL('../support/misbehaving-parse-worker.mjs', import.meta.url);
const CANNOT_START = new URL('../support/no-such-parse-worker.mjs', import.meta.url);
const pools: ParsePool[] = [];

function pool(settings: Partial<ParseSettings> = {}, entry?: URL, logger = silentLogger): ParsePool {
  const created = new ParsePool({ workers: 1, timeoutMs: 20_000, memoryMb: 256, ...settings }, logger, entry);
  pools.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function mail(body: string, extraHeaders = ''): Buffer {
  return Buffer.from(
    'From: Ann Example <ann@customer.example>\r\nTo: support@acme.example\r\nSubject: Invoice question\r\n' +
      'Date: Mon, 03 Nov 2025 10:00:00 +0000\r\nMessage-ID: <pool-1@customer.example>\r\n' +
      `${extraHeaders}Content-Type: text/plain; charset=utf-8\r\n\r\n${body}`,
    'utf8',
  );
}

/** The stand-in worker answers an ordinary message with `echo <kind> <text> from <threadId>`. */
function echoedBy(result: { parsed: { ok: boolean; reason?: string } }): string {
  expect(result.parsed.ok).toBe(false);
  const reason = (result.parsed as { reason: string }).reason;
  expect(reason).toMatch(/^echo /);
  return reason.slice(reason.lastIndexOf(' from ') + 6);
}

describe('ParsePool with the real parse worker', () => {
  it('parses a message in a worker thread and brings back the whole parsed email', async () => {
    const p = pool();
    const result = await p.read(
      mail('Hello, where is my invoice?\r\n\r\nOn Mon, 3 Nov 2025 at 09:00, Acme <support@acme.example> wrote:\r\n> old\r\n'),
    );
    expect(p.inProcess).toBe(false);
    expect(p.size).toBe(1);
    expect(result.text).toBe('Hello, where is my invoice?');
    if (!result.parsed.ok) throw new Error(result.parsed.reason);
    const email = result.parsed.email;
    expect(email.subject).toBe('Invoice question');
    expect(email.from).toEqual({ address: 'ann@customer.example', name: 'Ann Example' });
    // Structured clone keeps the Map and the Date.
    expect(email.rawHeaders).toBeInstanceOf(Map);
    expect(email.rawHeaders.get('message-id')).toEqual(['<pool-1@customer.example>']);
    expect(email.date).toBeInstanceOf(Date);
    expect(email.date?.toISOString()).toBe('2025-11-03T10:00:00.000Z');
  });

  it('caps the new text and the stored body text, marking the cut', async () => {
    const long = 'This line repeats in a very long message. '.repeat(5_000); // 215,000 characters
    const result = await pool().read(mail(long));
    if (!result.parsed.ok) throw new Error(result.parsed.reason);
    expect(result.text.length).toBeLessThan(MAX_NEW_TEXT_CHARS + 100);
    expect(result.text).toMatch(/\[… cut here: longer than 20,000 characters\]$/);
    expect(result.parsed.email.bodyText.length).toBeLessThan(MAX_BODY_TEXT_CHARS + 100);
    expect(result.parsed.email.bodyText).toMatch(/\[… cut here: longer than 100,000 characters\]$/);
    expect(long.startsWith(result.text.slice(0, 1_000))).toBe(true);
  });

  it('reads only the headers of a message cut off in its body or in its headers', async () => {
    const p = pool();
    const whole = mail('x'.repeat(100_000));
    const cutInBody = await p.readHeaders(whole.subarray(0, 400));
    if (!cutInBody.ok) throw new Error(cutInBody.reason);
    expect(cutInBody.email.subject).toBe('Invoice question');
    expect(cutInBody.email.messageId).toBe('<pool-1@customer.example>');
    const cutInHeaders = await p.readHeaders(whole.subarray(0, whole.indexOf('Date:')));
    if (!cutInHeaders.ok) throw new Error(cutInHeaders.reason);
    expect(cutInHeaders.email.from?.address).toBe('ann@customer.example');
    expect(cutInHeaders.email.date).toBeNull();
  });

  it('parses the hostile HTML and combining-mark mails in a worker', async () => {
    const p = pool();
    const deep = Buffer.from(
      'From: a@customer.example\r\nSubject: deep\r\nContent-Type: text/html\r\n\r\n' +
        '<div>'.repeat(300_000) +
        'Deep text.' +
        '</div>'.repeat(300_000),
    );
    const marks = mail('a' + '\u0301'.repeat(150_000));
    const [a, b] = await Promise.all([p.read(deep), p.read(marks)]);
    expect(a.text).toBe('Deep text.');
    expect(b.text.length).toBeLessThanOrEqual(MAX_NEW_TEXT_CHARS + 100);
  });

  it('lets a process exit on its own once reading is done (idle workers hold nothing open)', async () => {
    const script = [
      "import { ParsePool } from './src/ingest/parse-pool.ts';",
      "import { silentLogger } from './src/logger.ts';",
      'const pool = new ParsePool({ workers: 2, timeoutMs: 20000, memoryMb: 256 }, silentLogger);',
      "const r = await pool.read(Buffer.from('From: a@b.example\\r\\nSubject: s\\r\\n\\r\\nbody'));",
      'console.log(r.parsed.ok ? r.parsed.email.subject : r.parsed.reason);',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url).pathname,
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe('s');
  });
});

describe('ParsePool with workers that misbehave', () => {
  it('stops a worker that never answers, keeps the reason, and serves the next message from a new worker', async () => {
    const p = pool({ timeoutMs: 1_500 }, STAND_IN);
    const before = echoedBy(await p.read(Buffer.from('first')));
    const stuck = await p.read(Buffer.from('SPIN'));
    expect(stuck).toEqual({ parsed: { ok: false, reason: 'parsing took longer than 1500 ms; the parse worker was stopped' }, text: '' });
    const after = echoedBy(await p.read(Buffer.from('next')));
    expect(after).not.toBe(before);
    expect(p.size).toBe(1);
  });

  it('answers other messages while one worker is stuck', async () => {
    const p = pool({ workers: 2, timeoutMs: 5_000 }, STAND_IN);
    const order: string[] = [];
    const stuck = p.read(Buffer.from('SPIN')).then(() => order.push('stuck'));
    const ordinary = p.read(Buffer.from('ordinary')).then(() => order.push('ordinary'));
    await Promise.all([stuck, ordinary]);
    expect(order).toEqual(['ordinary', 'stuck']);
  });

  it('stops a worker that runs out of memory, and keeps going', async () => {
    const p = pool({ memoryMb: 64 }, STAND_IN);
    const bomb = await p.read(Buffer.from('ALLOC'));
    expect(bomb.parsed).toEqual({ ok: false, reason: 'parsing needed more than 64 MB of memory; the parse worker was stopped' });
    echoedBy(await p.read(Buffer.from('after the bomb')));
  });

  it('keeps going after a worker exits or throws in the middle of a message', async () => {
    const p = pool({}, STAND_IN);
    const exited = await p.read(Buffer.from('EXIT'));
    expect(exited.parsed).toEqual({ ok: false, reason: 'the parse worker failed: the parse worker exited with code 3' });
    const thrown = await p.read(Buffer.from('THROW'));
    expect(thrown.parsed).toEqual({ ok: false, reason: 'the parse worker failed: thrown by the stand-in worker' });
    echoedBy(await p.read(Buffer.from('still here')));
  });

  it('queues messages while every worker is busy and answers each one', async () => {
    const p = pool({ workers: 2 }, STAND_IN);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => p.read(Buffer.from(`message ${i}`))));
    expect(results.map((r) => (r.parsed as { reason: string }).reason.split(' from ')[0])).toEqual(
      Array.from({ length: 20 }, (_, i) => `echo message message ${i}`),
    );
    expect(p.size).toBe(2);
  });

  it('sends each message as its own copy, not the buffer it is a view of', async () => {
    const p = pool({}, STAND_IN);
    const big = Buffer.from('AAAA-first|BBBB-second');
    const second = big.subarray(11);
    expect((await p.read(second)).parsed).toMatchObject({ reason: expect.stringMatching(/^echo message BBBB-second from /) });
    expect(big.toString()).toBe('AAAA-first|BBBB-second'); // the caller's buffer is untouched (not transferred)
  });
});

describe('ParsePool when no worker can start', () => {
  it('parses in-process instead, and says so once', async () => {
    const lines: string[] = [];
    const logger = createLogger('test', { level: 'warn', write: (line) => lines.push(line) });
    const p = pool({ workers: 2 }, CANNOT_START, logger);
    const results = await Promise.all([p.read(mail('one')), p.read(mail('two')), p.read(mail('three'))]);
    expect(results.map((r) => r.text)).toEqual(['one', 'two', 'three']);
    expect(p.inProcess).toBe(true);
    expect((await p.read(mail('four'))).text).toBe('four');
    expect(lines.filter((line) => line.includes('no parse worker could start'))).toHaveLength(1);
  });
});
