/**
 * `eval --pairs` and `eval --html FILE`: each scored pair for a person to read — the customer mail
 * it answers, the agent's draft beside the team's real reply, and the pair's scores — as text on
 * the terminal or as one self-contained HTML page (every value escaped, no scripts, no external assets).
 */
import { html, type SafeHtml } from '../../console/html.ts';
import type { EvalPair, EvalReport } from '../../replay/run-eval.ts';

const EXCERPT = 600;

function excerpt(text: string): string {
  const flat = text.trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}…` : flat;
}

function scoreLine(pair: EvalPair): string {
  const parts = [
    `similarity ${pair.similarity.toFixed(3)}`,
    pair.grounded ? 'every number and identifier in the prompt' : `not in the prompt: ${pair.ungrounded.join(', ')}`,
    `profile facts used ${pair.factsUsed}/${pair.factsHeld}`,
  ];
  if (pair.needsHumanAgrees !== null) parts.push(pair.needsHumanAgrees ? 'needs-a-person agrees' : 'needs-a-person differs');
  return parts.join(' · ');
}

const indent = (text: string) =>
  excerpt(text)
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');

/** The pairs as text, lowest similarity first (the drafts most worth reading). */
export function formatPairsText(report: Pick<EvalReport, 'pairs'>): string {
  const pairs = [...report.pairs].sort((a, b) => a.similarity - b.similarity);
  return pairs
    .map(
      (pair, i) =>
        `#${i + 1} ${pair.customerMessageId} (thread ${pair.threadId})\n  ${scoreLine(pair)}\n` +
        `  agent's draft:\n${indent(pair.draft)}\n  team's reply:\n${indent(pair.teamReply)}\n`,
    )
    .join('\n');
}

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse}td,th{padding:.2rem .8rem;text-align:left}section{border-top:1px solid #ccc;padding:.8rem 0}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:1rem}pre{white-space:pre-wrap;background:#f5f5f5;padding:.6rem;margin:0}
.scores{color:#444}`;

/** The report as one HTML page: the summary, then every pair side by side, lowest similarity first. */
export function renderPairsHtml(report: EvalReport, legend: ReadonlyArray<readonly [string, string]>): string {
  const pairs = [...report.pairs].sort((a, b) => a.similarity - b.similarity);
  const rows: SafeHtml[] = legend.map(([name, meaning]) => html`<tr><th>${name}</th><td>${meaning}</td></tr>`);
  const sections = pairs.map(
    (pair, i) => html`<section>
<h2>#${i + 1} ${pair.customerMessageId}</h2>
<p class="scores">${scoreLine(pair)} · thread ${pair.threadId}</p>
<div class="cols"><div><h3>Agent's draft</h3><pre>${pair.draft}</pre></div><div><h3>Team's reply</h3><pre>${pair.teamReply}</pre></div></div>
</section>`,
  );
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Evaluation: ${report.provider}/${report.model}</title><style>${STYLE}</style></head>
<body><h1>Evaluation of ${report.provider}/${report.model} on ${report.address}</h1>
<p>${report.messages} messages, ${report.customerMails} from customers, ${report.answered} answered by the team, ${report.pairs.length} pairs scored.</p>
<table>${rows}</table>
${sections}
</body></html>
`.value;
}
