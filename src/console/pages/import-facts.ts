/**
 * The console's facts Import: an uploaded CSV or JSON file of trusted facts, run through the same
 * use case as `support-agent import` (src/app/import-facts.ts): the whole file is checked first,
 * and any problem is shown with its line or entry, nothing imported.
 */
import { importFactsContent } from '../../app/import-facts.ts';
import { IMPORT_FORMATS } from '../../app/import-formats.ts';
import { isAppError, type AppError } from '../../errors.ts';
import type { ConsoleContext, Session } from '../context.ts';
import { csrfField } from '../csrf.ts';
import { html, size, type SafeHtml } from '../html.ts';
import { renderPage } from '../layout.ts';
import { readUpload } from '../uploads.ts';

/** The Import form, on the customers list and on each profile. */
export function importFactsForm(session: Session, maxBytes: number): SafeHtml {
  return html`<section aria-labelledby="import-facts-title" class="card">
  <h2 id="import-facts-title">Import facts</h2>
  <p>A CSV or JSON file of trusted facts keyed by the customer's email address (a CRM export), at most ${size(maxBytes)}:
  the same import as <code>support-agent import</code>. The whole file is checked first: one bad row and nothing is imported.</p>
  <details><summary>Accepted formats</summary><pre>${IMPORT_FORMATS}</pre></details>
  <form method="post" action="/customers/import" enctype="multipart/form-data">${csrfField(session)}
    <div><label for="facts-file">CSV or JSON file</label>
    <input type="file" id="facts-file" name="file" required accept=".csv,.json,text/csv,application/json"></div>
    <button type="submit" class="primary">Import</button>
  </form>
</section>`;
}

export async function importFactsAction(c: ConsoleContext): Promise<Response> {
  const runtime = c.get('runtime');
  const upload = await readUpload(c, 'file', runtime.config.knowledge.uploadMaxBytes);
  let outcome: SafeHtml;
  let status: 200 | 400 = 200;
  try {
    const content = new TextDecoder('utf-8', { fatal: true }).decode(upload.bytes);
    const result = await importFactsContent(
      runtime.db,
      runtime.policy,
      { mode: runtime.config.entity.key, extraFreeMailDomains: runtime.config.entity.extraFreeMailDomains },
      upload.name,
      content,
    );
    outcome = html`<p class="notice notice-success" role="status" id="import-result">Imported ${result.facts} fact(s) for ${result.customers} customer(s) from ${upload.name}. Each is recorded in its customer's decision trail.</p>`;
  } catch (error) {
    const message =
      error instanceof TypeError
        ? `${upload.name}: not UTF-8 text`
        : isAppError(error, 'INPUT_INVALID') || isAppError(error, 'NOT_FOUND')
          ? (error as AppError).message
          : null;
    if (message === null) throw error;
    status = 400;
    outcome = html`<div class="notice notice-error" role="alert" id="import-result"><p>Nothing was imported.</p><p>${message.slice(0, 1_000)}</p></div>`;
  }
  const session = c.get('session');
  const body = html`
<p><a href="/customers">Customers</a></p>
<h1>Import facts</h1>
${outcome}
${importFactsForm(session, runtime.config.knowledge.uploadMaxBytes)}`;
  return c.html(renderPage({ title: 'Import facts', section: 'customers', session, body }), status);
}
