/**
 * `eval` as a newcomer uses it (issue 31): a wrong --address is an error naming the history's
 * busiest senders instead of a silent 0 pairs; --kb puts the help center in the prompts the pairs
 * are scored from; the per-pair views show each draft beside the team's reply, escaped.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVAL_LEGEND } from '../../src/cli/commands/eval.ts';
import { formatPairsText, renderPairsHtml } from '../../src/cli/commands/eval-pairs-view.ts';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/logger.ts';
import { runEval } from '../../src/replay/run-eval.ts';

const HISTORY = path.resolve(import.meta.dirname, '../../fixtures/eval/history.mbox');
const SENT = path.resolve(import.meta.dirname, '../../fixtures/eval/sent.mbox');
const KB = path.resolve(import.meta.dirname, '../../fixtures/knowledge/docs');
const config = loadConfig({ LLM_PROVIDER: 'offline', DATA_DIR: '/nonexistent', SUPPORT_ADDRESS: 'support@acme.example' });

describe('eval options', () => {
  it('a wrong --address, or no --sent folder, finds no team mail: an error naming the busiest senders', async () => {
    await expect(runEval({ input: HISTORY, sent: SENT, address: 'wrong@acme.example', config, logger: silentLogger })).rejects.toThrow(
      /^no team reply in .*history\.mbox to score against: no mail from wrong@acme\.example \(or STAFF_ADDRESSES\); the most frequent senders are support@acme\.example \(22\), /,
    );
    await expect(runEval({ input: HISTORY, address: 'support@acme.example', config, logger: silentLogger })).rejects.toThrow(
      /^no team reply in .*history\.mbox to score against: no mail from support@acme\.example \(or STAFF_ADDRESSES\) and no --sent folder; /,
    );
  });

  it('--kb imports the help center first: the prompts the pairs are scored from hold its passages', { timeout: 300_000 }, async () => {
    const withKb = await runEval({
      input: HISTORY,
      sent: SENT,
      address: 'support@acme.example',
      config,
      logger: silentLogger,
      knowledge: [KB],
    });
    expect(withKb.pairs.length).toBeGreaterThan(0);
    expect(withKb.failures.filter((f) => f.startsWith('knowledge'))).toEqual([]);

    const text = formatPairsText(withKb);
    const blocks = text.split(/\n(?=#\d+ )/);
    expect(blocks).toHaveLength(withKb.pairs.length);
    const similarities = blocks.map((b) => Number(/similarity (\d\.\d{3})/.exec(b)?.[1]));
    expect(similarities).toEqual([...similarities].sort((a, b) => a - b));
    expect(blocks[0]).toMatch(/agent's draft:\n {4}\S[\s\S]*team's reply:\n {4}\S/);

    const page = renderPairsHtml(
      { ...withKb, pairs: [{ ...withKb.pairs[0]!, draft: '<script>alert(1)</script> & "quotes"' }] },
      EVAL_LEGEND,
    );
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;');
    expect(page).not.toContain('<script>');
    expect(page).toContain("default-src 'none'");
    for (const [name] of EVAL_LEGEND) expect(page).toContain(`<th>${name.replace(/'/g, '&#39;')}</th>`);
  });
});
