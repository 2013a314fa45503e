import { describe, expect, it } from 'vitest';
import { prettyLogLine, wantsPrettyLogs } from '../../src/app/log-format.ts';
import { progressLine, progressReporter } from '../../src/cli/progress.ts';
import { createLogger } from '../../src/logger.ts';

describe('log lines for a person at a terminal', () => {
  it('renders the time, level, scope, message and fields of a logger line', () => {
    const lines: string[] = [];
    const logger = createLogger('replay', { level: 'info', secrets: ['hunter22'], write: (l) => lines.push(prettyLogLine(l)) });
    logger.child('llm').warn('LLM request failed; retrying', { attempt: 3, error: 'token hunter22 refused', ok: false, list: [1, 2] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d {2}WARN {3}replay:llm {2}LLM request failed; retrying {2}attempt=3 {2}error="token \*\*\* refused" {2}ok=false {2}list=\[1,2\]$/,
    );
  });

  it.each([
    ['not json at all', 'not json at all'],
    ['[1,2]', '[1,2]'],
    ['"a string"', '"a string"'],
    ['{"message":"no time or level"}', '--:--:--  UNDEFINED    no time or level'],
    ['{"time":"2026-12-06T10:11:12.000Z","level":"error","scope":"x","message":"m","empty":""}', '10:11:12  ERROR  x  m  empty=""'],
  ])('%s → %s', (input, output) => {
    expect(prettyLogLine(input)).toBe(output);
  });

  it.each([
    ['auto', true, true],
    ['auto', false, false],
    ['json', true, false],
    ['pretty', false, true],
  ] as const)('LOG_FORMAT=%s on a terminal: %s → pretty %s', (format, terminal, pretty) => {
    expect(wantsPrettyLogs(format, terminal)).toBe(pretty);
  });
});

describe('progress of a batch command', () => {
  it.each([
    [0, 74, 0, 'replay: 0/74 messages'],
    [10, 74, 200, 'replay: 10/74 messages'],
    [24, 74, 2000, 'replay: 24/74 messages, 12/s, about 4 s left'],
    [3, 100, 2000, 'replay: 3/100 messages, 1.5/s, about 1 min 5 s left'],
    [74, 74, 6200, 'replay: 74/74 messages, 12/s, done in 6 s'],
    [1, 5000, 1000, 'replay: 1/5000 messages, 1.0/s, about 1 h 23 min left'],
  ])('%d of %d after %d ms', (done, total, elapsed, line) => {
    expect(progressLine('replay', 'messages', done, total, elapsed)).toBe(line);
  });

  it('redraws one line on a terminal, at most every 200 ms, and ends it', () => {
    let clock = 0;
    const out: string[] = [];
    const report = progressReporter({ label: 'eval', unit: 'messages', isTerminal: true, write: (t) => out.push(t), now: () => clock });
    for (let done = 1; done <= 10; done++) {
      clock += 50;
      report(done, 10);
    }
    expect(out.every((t) => t.startsWith('\r\u001b[2K'))).toBe(true);
    expect(out.filter((t) => t.endsWith('\n'))).toHaveLength(1);
    expect(out.length).toBeLessThan(10);
    expect(out.at(-1)).toBe('\r\u001b[2Keval: 10/10 messages, 20/s, done in 1 s\n');
  });

  it('writes a line every 2 s off a terminal, and the last one', () => {
    let clock = 0;
    const out: string[] = [];
    const report = progressReporter({ label: 'replay', unit: 'messages', isTerminal: false, write: (t) => out.push(t), now: () => clock });
    for (let done = 1; done <= 100; done++) {
      clock += 100;
      report(done, 100);
    }
    expect(out).toHaveLength(6);
    expect(out.every((t) => t.endsWith('\n') && !t.includes('\r'))).toBe(true);
    expect(out.at(-1)).toBe('replay: 100/100 messages, 10/s, done in 10 s\n');
  });
});
