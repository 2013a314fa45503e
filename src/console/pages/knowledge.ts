/**
 * The knowledge base as an operator keeps it: the documents, a document's passages, a search box
 * that runs exactly the search a reply turn runs (showing the lexical and the by-meaning ranks
 * and scores, and the fused order), importing an uploaded file and removing a document.
 */
import { z } from 'zod';
import { importKnowledgeUpload, type KbImportReport } from '../../app/import-knowledge.ts';
import type { KnowledgeSearchResult } from '../../app/knowledge-search.ts';
import { AppError } from '../../errors.ts';
import { kbEmbeddingCounts, kbPassageDocument, listKbDocuments, loadKbDocument, removeKbDocuments } from '../../store/knowledge.ts';
import type { ConsoleContext } from '../context.ts';
import { csrfField } from '../csrf.ts';
import { readForm, readParam, readQuery } from '../forms.ts';
import { html, mailText, size, time, type SafeHtml } from '../html.ts';
import { readNotice, renderPage } from '../layout.ts';
import { readUpload } from '../uploads.ts';

const searchQuery = z.object({ q: z.string().trim().max(500).optional() }).loose();
const SEARCH_LIMIT = 10;

const score = (value: number | null, digits: number): SafeHtml =>
  value === null ? html`<span class="muted">–</span>` : html`${value.toFixed(digits)}`;
const rank = (value: number | null): SafeHtml => (value === null ? html`<span class="muted">–</span>` : html`#${value}`);

async function rankingStatus(c: ConsoleContext): Promise<SafeHtml> {
  const runtime = c.get('runtime');
  const embedder = runtime.embedder;
  if (!embedder)
    return html`<p>Retrieval: lexical (full-text search). Set <code>OPENAI_EMBEDDING_MODEL</code> to also rank by meaning.</p>`;
  const counts = await kbEmbeddingCounts(runtime.database.sql, embedder.model);
  return html`<p>Retrieval: lexical and by meaning (<code>${embedder.model}</code>), fused by reciprocal rank.
    ${counts.embedded} passage(s) embedded${counts.pending > 0 ? html`, <strong>${counts.pending} waiting</strong> (the next import embeds them)` : ''}.</p>`;
}

function searchSection(q: string | undefined, result: KnowledgeSearchResult | null): SafeHtml {
  return html`<section aria-labelledby="kb-search-title" class="card">
  <h2 id="kb-search-title">Test retrieval</h2>
  <form method="get" action="/knowledge" role="search" class="inline-form">
    <div><label for="kb-q">A customer's question</label>
    <input type="search" id="kb-q" name="q" value="${q ?? ''}" maxlength="500"></div>
    <button type="submit">Search</button>
  </form>
  ${
    result === null
      ? ''
      : html`${result.degraded ? html`<p class="notice notice-warning" role="status">The embeddings endpoint failed, so this is the lexical ranking only: ${result.degraded}</p>` : ''}
  ${
    result.hits.length === 0
      ? html`<p>No passage matches.</p>`
      : html`<div class="table-wrap"><table id="kb-results">
    <caption>The ${result.hits.length} best passages, ${result.mode === 'fused' ? 'fused order' : 'lexical order'}</caption>
    <thead><tr><th scope="col">#</th><th scope="col">Passage</th><th scope="col">Lexical rank</th><th scope="col">Lexical score</th>${
      result.mode === 'fused' ? html`<th scope="col">Meaning rank</th><th scope="col">Cosine</th><th scope="col">Fused score</th>` : ''
    }</tr></thead>
    <tbody>${result.hits.map(
      (h, i) => html`<tr>
      <td>${i + 1}</td>
      <td><a href="/knowledge/passage/${h.id}">${h.titlePath}</a> <span class="muted">(${h.title})</span>
        <br><span class="muted">${h.text.replace(/\s+/g, ' ').slice(0, 200)}</span></td>
      <td>${rank(h.lexicalRank)}</td><td>${score(h.lexicalScore, 4)}</td>${
        result.mode === 'fused' ? html`<td>${rank(h.vectorRank)}</td><td>${score(h.vectorScore, 3)}</td><td>${score(h.score, 4)}</td>` : ''
      }
    </tr>`,
    )}</tbody></table></div>`
  }`
  }
</section>`;
}

function importSection(c: ConsoleContext): SafeHtml {
  const max = c.get('runtime').config.knowledge.uploadMaxBytes;
  return html`<section aria-labelledby="kb-import-title" class="card">
  <h2 id="kb-import-title">Import a document</h2>
  <p>Markdown, HTML, plain text or PDF, at most ${size(max)}. A file with the name of a document already here replaces it
  (unchanged passages keep their vectors); the same file again changes nothing.</p>
  <form method="post" action="/knowledge/import" enctype="multipart/form-data">${csrfField(c.get('session'))}
    <div><label for="kb-file">File</label>
    <input type="file" id="kb-file" name="file" required accept=".md,.markdown,.html,.htm,.txt,.text,.pdf"></div>
    <div><label for="kb-lang">Language (two letters, when the document does not say)</label>
    <input type="text" id="kb-lang" name="lang" maxlength="10" pattern="[A-Za-z]{2}(-[A-Za-z0-9]+)?"></div>
    <div><label for="kb-tags">Tags (comma-separated)</label>
    <input type="text" id="kb-tags" name="tags" maxlength="300"></div>
    <button type="submit" class="primary">Import</button>
  </form>
</section>`;
}

function importResult(report: KbImportReport): SafeHtml {
  const lines = [
    ...report.created.map((s) => `Imported ${s} (new).`),
    ...report.updated.map((s) => `Updated ${s}: its passages were replaced.`),
    ...report.unchanged.map((s) => `${s} is unchanged: nothing to do.`),
  ];
  const skipped = report.skipped.map((s) => `Skipped ${s.source}: ${s.reason}.`);
  const embeddings = report.embeddings
    ? report.embeddings.error
      ? `Embeddings (${report.embeddings.model}) failed after ${report.embeddings.embedded} passage(s): ${report.embeddings.error}. The passages are searchable lexically; the next import embeds the rest.`
      : `Embeddings (${report.embeddings.model}): ${report.embeddings.embedded} passage(s) embedded.`
    : null;
  const kind = skipped.length > 0 || report.embeddings?.error ? 'warning' : 'success';
  return html`<div class="notice notice-${kind}" role="status" id="kb-import-result"><ul>${[
    ...lines,
    ...skipped,
    ...(embeddings ? [embeddings] : []),
  ].map((l) => html`<li>${l}</li>`)}</ul><p>${report.passages} passage(s) in the imported document.</p></div>`;
}

async function renderKnowledge(c: ConsoleContext, extra: { report?: KbImportReport } = {}): Promise<Response> {
  const runtime = c.get('runtime');
  const { q } = c.req.method === 'GET' ? readQuery(c, searchQuery) : { q: undefined };
  const [docs, status, result] = await Promise.all([
    listKbDocuments(runtime.db),
    rankingStatus(c),
    q ? runtime.knowledge.search(q, SEARCH_LIMIT) : Promise.resolve(null),
  ]);
  const session = c.get('session');
  const body = html`
<h1>Knowledge base</h1>
${extra.report ? importResult(extra.report) : ''}
${status}
${searchSection(q, result)}
${importSection(c)}
<h2>Documents (${docs.length})</h2>
${
  docs.length === 0
    ? html`<p>The knowledge base is empty. Import a file above, or run <code>support-agent kb import &lt;folder&gt;</code>.</p>`
    : html`<div class="table-wrap"><table id="kb-documents">
  <caption class="sr-only">Knowledge documents</caption>
  <thead><tr><th scope="col">Document</th><th scope="col">Title</th><th scope="col">Format</th><th scope="col">Language</th><th scope="col">Passages</th><th scope="col">Tags</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
  <tbody>${docs.map(
    (d) => html`<tr id="doc-${d.id}">
      <td><a href="/knowledge/${d.id}">${d.source}</a></td><td>${d.title}</td><td>${d.format}</td><td>${d.lang ?? html`<span class="muted">–</span>`}</td>
      <td>${d.passages}</td><td>${d.tags.join(', ')}</td><td>${time(d.updatedAt)}</td>
      <td><form method="post" action="/knowledge/${d.id}/remove">${csrfField(session)}<button type="submit" class="danger" aria-label="Remove ${d.source}">Remove</button></form></td>
    </tr>`,
  )}</tbody></table></div>`
}`;
  return c.html(renderPage({ title: 'Knowledge base', section: 'knowledge', session, notice: readNotice(c), body }));
}

export function knowledgePage(c: ConsoleContext): Promise<Response> {
  return renderKnowledge(c);
}

export async function knowledgeDocumentPage(c: ConsoleContext): Promise<Response> {
  const id = readParam(c, 'id');
  const doc = await loadKbDocument(c.get('runtime').db, id);
  if (!doc) throw new AppError('NOT_FOUND', 'that knowledge document does not exist (it may have been removed)');
  const session = c.get('session');
  const body = html`
<p><a href="/knowledge">Knowledge base</a></p>
<h1>${doc.title}</h1>
<dl class="facts">
  <dt>Source</dt><dd>${doc.source}</dd>
  <dt>Format</dt><dd>${doc.format}</dd>
  <dt>Language</dt><dd>${doc.lang ?? 'not known'}</dd>
  <dt>Tags</dt><dd>${doc.tags.join(', ') || html`<span class="muted">none</span>`}</dd>
  <dt>Size</dt><dd>${size(doc.bytes)}, SHA-256 <code>${doc.contentHash.slice(0, 16)}…</code></dd>
  <dt>Updated</dt><dd>${time(doc.updatedAt)}</dd>
</dl>
<form method="post" action="/knowledge/${doc.id}/remove">${csrfField(session)}<button type="submit" class="danger">Remove this document</button></form>
<h2>Passages (${doc.passages})</h2>
${doc.passageList.map(
  (p) => html`<section class="card" id="passage-${p.id}" aria-labelledby="passage-${p.id}-title">
  <h3 id="passage-${p.id}-title">${p.titlePath}</h3>
  <p class="muted">kb:${p.id} · ${p.tokens} tokens</p>
  ${mailText(p.text)}
</section>`,
)}`;
  return c.html(renderPage({ title: doc.title, section: 'knowledge', session, notice: readNotice(c), body }));
}

/** A passage's link: its document page, at the passage. */
export async function knowledgePassageRedirect(c: ConsoleContext): Promise<Response> {
  const id = readParam(c, 'id');
  const documentId = await kbPassageDocument(c.get('runtime').database.sql, id);
  if (!documentId) throw new AppError('NOT_FOUND', 'that passage no longer exists (its document was re-imported or removed)');
  return c.redirect(`/knowledge/${documentId}#passage-${id}`, 303);
}

const importForm = z
  .object({
    lang: z.string().trim().max(10).optional(),
    tags: z.string().max(300).optional(),
  })
  .loose();

export async function knowledgeImportAction(c: ConsoleContext): Promise<Response> {
  const runtime = c.get('runtime');
  const settings = runtime.config.knowledge;
  const maxBytes = Math.min(settings.uploadMaxBytes, settings.maxFileBytes);
  const upload = await readUpload(c, 'file', maxBytes);
  const form = await readForm(c, importForm);
  const tags = (form.tags ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  let report: KbImportReport;
  try {
    report = await importKnowledgeUpload(
      runtime.db,
      upload,
      { ...runtime.kbImportOptions(), maxFileBytes: maxBytes, ...(form.lang ? { lang: form.lang } : {}), tags },
      runtime.now(),
    );
  } catch (error) {
    // A bad language code is the CLI's USAGE error: here it is the form's.
    if (error instanceof AppError && error.code === 'USAGE')
      throw new AppError('INPUT_INVALID', error.message.replace(/^--lang/, 'language'));
    throw error;
  }
  return renderKnowledge(c, { report });
}

export async function knowledgeRemoveAction(c: ConsoleContext): Promise<Response> {
  const id = readParam(c, 'id');
  const removed = await removeKbDocuments(c.get('runtime').db, [id]);
  if (removed === 0) throw new AppError('NOT_FOUND', 'that knowledge document does not exist (it may have been removed already)');
  return c.redirect('/knowledge?notice=kb-removed', 303);
}
