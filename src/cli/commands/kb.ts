/**
 * `support-agent kb …`: the knowledge base as an operator keeps it: import files and folders,
 * list, show, search (to test retrieval), remove.
 */
import { importKnowledge } from '../../app/import-knowledge.ts';
import { AppError } from '../../errors.ts';
import { withOperatorRuntime } from '../operator-runtime.ts';
import { output, servedRuntime } from '../output.ts';
import { progressReporter } from '../progress.ts';
import { listKbDocuments, loadKbDocument, removeKbDocuments } from '../../store/knowledge.ts';

const print = (value: unknown): void => void output().out(typeof value === 'string' ? value + '\n' : JSON.stringify(value, null, 2) + '\n');

export function runKbImport(paths: string[], options: { prune?: boolean; lang?: string; tag?: string[]; json?: boolean }): Promise<void> {
  return withOperatorRuntime(async (runtime) => {
    const report = await importKnowledge(
      runtime.db,
      paths,
      {
        ...runtime.kbImportOptions(),
        prune: options.prune ?? false,
        ...(options.lang ? { lang: options.lang } : {}),
        tags: options.tag ?? [],
        // Only on a terminal: piped output (and a served command's reply) stays the report alone.
        ...(process.stderr.isTTY && servedRuntime() === null
          ? {
              progress: progressReporter({
                label: 'kb import',
                unit: 'files',
                isTerminal: true,
                write: (text) => process.stderr.write(text),
              }),
            }
          : {}),
      },
      runtime.now(),
    );
    if (options.json) print(report);
    else printImport(report);
    const read = report.created.length + report.updated.length + report.unchanged.length;
    if (read === 0) {
      throw new AppError(
        'INPUT_INVALID',
        `no document read from ${paths.join(', ')}` +
          (report.skipped.length > 0 ? ` (${report.skipped.length} skipped, see above)` : ' (no Markdown, HTML, text or PDF file found)'),
      );
    }
    if (report.embeddings?.error) {
      throw new AppError(
        'LLM_UNAVAILABLE',
        `the embeddings endpoint failed (${report.embeddings.error.slice(0, 200)}); the documents are imported, lexical search only`,
      );
    }
  }, 'create');
}

function printImport(report: Awaited<ReturnType<typeof importKnowledge>>): void {
  print(
    `${report.created.length} new, ${report.updated.length} updated, ${report.unchanged.length} unchanged, ${report.removed} removed, ${report.skipped.length} skipped; ${report.passages} passages in the imported documents`,
  );
  for (const s of report.skipped) print(`skipped ${s.source}: ${s.reason}`);
  if (report.embeddings)
    print(
      `embeddings (${report.embeddings.model}): ${report.embeddings.embedded} passage(s) embedded${report.embeddings.error ? `; stopped: ${report.embeddings.error}` : ''}`,
    );
}

export function runKbList(options: { json?: boolean }): Promise<void> {
  return withOperatorRuntime(async ({ db }) => {
    const docs = await listKbDocuments(db);
    if (options.json) return print(docs.map((d) => ({ ...d, updatedAt: d.updatedAt.toISOString() })));
    if (docs.length === 0) return print('The knowledge base is empty (support-agent kb import <folder>).');
    for (const d of docs)
      print(
        `${d.id}  ${d.source}  ${d.format} ${d.lang ?? '--'}  ${d.passages} passage(s)  ${JSON.stringify(d.title)}${d.tags.length ? `  [${d.tags.join(', ')}]` : ''}`,
      );
  });
}

export function runKbShow(ref: string): Promise<void> {
  return withOperatorRuntime(async ({ db }) => {
    const doc = await loadKbDocument(db, ref);
    if (!doc) throw new AppError('NOT_FOUND', `no knowledge document ${ref}`);
    print({ ...doc, updatedAt: doc.updatedAt.toISOString() });
  });
}

export function runKbSearch(query: string, options: { json?: boolean; limit?: string }): Promise<void> {
  const limit = Number(options.limit ?? 5);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new AppError('USAGE', '--limit must be a whole number from 1 to 100');
  return withOperatorRuntime(async ({ knowledge }) => {
    const { hits: results, mode, degraded } = await knowledge.search(query, limit);
    if (options.json) return print(results);
    if (degraded) print(`(embeddings unavailable, lexical ranking only: ${degraded})`);
    if (results.length === 0) return print('No passage matches.');
    const rank = (r: number | null) => (r === null ? '-' : String(r));
    for (const r of results)
      print(
        `${r.id}  ${r.score.toFixed(4)}${mode === 'fused' ? `  lexical #${rank(r.lexicalRank)} meaning #${rank(r.vectorRank)}` : ''}  ${r.titlePath}\n    ${r.text.replace(/\s+/g, ' ').slice(0, 160)}`,
      );
  });
}

export function runKbRemove(refs: string[]): Promise<void> {
  return withOperatorRuntime(async ({ db }) => {
    const removed = await removeKbDocuments(db, refs);
    if (removed === 0) throw new AppError('NOT_FOUND', `no knowledge document ${refs.join(', ')}`);
    print(`${removed} document(s) removed.`);
  });
}
