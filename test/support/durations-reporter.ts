/**
 * Prints, after the run, every test file with its project and duration (slowest first), and the
 * totals: tests by state and assertions made (recorded by count-assertions.ts). A slow file is
 * visible at the end of `npm test` without a profiler. TEST_SUMMARY_FILE=path also writes them
 * as JSON, for comparing two runs.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

interface FileRow {
  file: string;
  project: string;
  ms: number;
  tests: number;
  assertions: number;
}

function rowOf(module: TestModule, root: string): FileRow {
  let tests = 0;
  let assertions = 0;
  for (const test of module.children.allTests()) {
    tests += 1;
    assertions += test.meta().assertions ?? 0;
  }
  return {
    file: path.relative(root, module.moduleId),
    project: module.project.name || '-',
    ms: Math.round(module.diagnostic().duration),
    tests,
    assertions,
  };
}

export default class DurationsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const root = process.cwd();
    const rows = testModules.map((module) => rowOf(module, root)).sort((a, b) => b.ms - a.ms);
    const states: Record<string, number> = {};
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        states[state] = (states[state] ?? 0) + 1;
      }
    }
    const assertions = rows.reduce((sum, row) => sum + row.assertions, 0);
    const width = Math.max(4, ...rows.map((row) => row.file.length));
    const lines = ['', 'Test files by duration (slowest first):'];
    for (const row of rows) {
      const seconds = (row.ms / 1000).toFixed(1).padStart(7);
      lines.push(`  ${seconds} s  ${row.project.padEnd(11)} ${row.file.padEnd(width)}  ${row.tests} tests, ${row.assertions} assertions`);
    }
    const byState = Object.entries(states)
      .map(([state, count]) => `${count} ${state}`)
      .join(', ');
    lines.push(`Totals: ${rows.length} files, ${byState}; ${assertions} assertions.`, '');
    process.stdout.write(lines.join('\n') + '\n');
    const summaryFile = process.env['TEST_SUMMARY_FILE'];
    if (summaryFile) writeFileSync(summaryFile, JSON.stringify({ states, assertions, files: rows }, null, 2) + '\n');
  }
}
