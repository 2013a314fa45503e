/**
 * Knowledge retrieval as a reply turn, `kb search` and the console run it: the lexical search in
 * PostgreSQL, and, when an embeddings model is configured, a ranking by meaning fused with it by
 * reciprocal rank fusion. Ranking by meaning sits behind one port (`VectorIndex`): today a brute
 * force cosine over the vectors held in the process, reloaded when the stored set changes;
 * pgvector, where a deployment has it, could take its place. An embeddings endpoint that fails
 * leaves the lexical ranking, with a log line: a turn never fails for it.
 */
import type { Embedder } from '../llm/embeddings.ts';
import type { Logger } from '../logger.ts';
import { kbQueryTerms, type KnowledgePassage } from '../memory/knowledge.ts';
import { cosineTopK, reciprocalRankFusion, unitVector, type VectorHit } from '../memory/vector-rank.ts';
import { describeError } from '../errors.ts';
import {
  kbPassagesToEmbed,
  kbVectorIds,
  kbVectorsVersion,
  loadKbPassages,
  loadKbVectors,
  searchKbPassages,
  setKbEmbeddings,
} from '../store/knowledge.ts';
import type { SqlExecutor } from '../store/sql.ts';

/** Finds the stored passage vectors nearest to a query vector. */
export interface VectorIndex {
  nearest(model: string, query: readonly number[], limit: number): Promise<VectorHit[]>;
}

/**
 * Brute-force cosine over every passage vector of the model, held in this process as unit-length
 * 32-bit floats. Each search checks (one small query) whether the stored set changed; when it did,
 * only the vectors of passages not held yet are read (an import of a few documents reads theirs,
 * not the whole base). Memory is passages × dimensions × 4 bytes; see docs/knowledge.md "Knowledge base" for
 * where it stops being fine.
 */
export class InProcessVectorIndex implements VectorIndex {
  private model: string | null = null;
  private version: string | null = null;
  private held = new Map<string, Float32Array>();
  private list: Array<{ id: string; vector: Float32Array }> = [];
  private loading: Promise<void> | null = null;

  constructor(private readonly sql: SqlExecutor) {}

  async nearest(model: string, query: readonly number[], limit: number): Promise<VectorHit[]> {
    const unit = unitVector(query);
    if (!unit) return [];
    await this.refresh(model);
    return cosineTopK(unit, this.list, limit);
  }

  private async refresh(model: string): Promise<void> {
    const version = await kbVectorsVersion(this.sql, model);
    if (this.model === model && this.version === version) return;
    // Concurrent searches share one reload.
    this.loading ??= (async () => {
      if (this.model !== model) this.held = new Map();
      const ids = await kbVectorIds(this.sql, model);
      const missing = ids.filter((id) => !this.held.has(id));
      const next = new Map<string, Float32Array>();
      for (const id of ids) {
        const vector = this.held.get(id);
        if (vector) next.set(id, vector);
      }
      for (const { id, vector } of await loadKbVectors(this.sql, model, missing)) {
        const unit = unitVector(vector);
        if (unit) next.set(id, unit);
      }
      this.held = next;
      this.list = [...next].map(([id, vector]) => ({ id, vector }));
      this.model = model;
      this.version = version;
    })().finally(() => {
      this.loading = null;
    });
    await this.loading;
  }
}

/** A found passage with how each ranking placed it (ranks from 1; null where it was not found). */
export interface KnowledgeHit extends KnowledgePassage {
  lexicalRank: number | null;
  vectorRank: number | null;
  /** The lexical `ts_rank` and the cosine similarity, where found. */
  lexicalScore: number | null;
  vectorScore: number | null;
}

export interface KnowledgeSearchResult {
  hits: KnowledgeHit[];
  /** `fused` when the embeddings answered, else `lexical` (with why, when they were configured). */
  mode: 'lexical' | 'fused';
  degraded: string | null;
}

/** Each ranking contributes this many candidates to the fusion (at least the limit). */
const CANDIDATES = 20;

export class KnowledgeSearch {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly embeddings: { embedder: Embedder; index: VectorIndex } | null,
    private readonly logger: Logger,
  ) {}

  /** Whether questions are also ranked by meaning. */
  get embedded(): boolean {
    return this.embeddings !== null;
  }

  /** The best `limit` passages for a question, best first. */
  async search(question: string, limit: number): Promise<KnowledgeSearchResult> {
    if (limit <= 0) return { hits: [], mode: 'lexical', degraded: null };
    const pool = Math.max(limit, CANDIDATES);
    const lexical = await searchKbPassages(this.sql, kbQueryTerms(question), this.embeddings ? pool : limit);
    const lexicalHits = lexical.map((p, i): KnowledgeHit => ({
      ...p,
      lexicalRank: i + 1,
      vectorRank: null,
      lexicalScore: p.score,
      vectorScore: null,
    }));
    if (!this.embeddings) return { hits: lexicalHits.slice(0, limit), mode: 'lexical', degraded: null };
    const { embedder, index } = this.embeddings;
    let nearest: VectorHit[];
    try {
      const [vector] = await embedder.embed([question.slice(0, 8_000)]);
      nearest = vector ? await index.nearest(embedder.model, vector, pool) : [];
    } catch (error) {
      const why = describeError(error);
      this.logger.warn('knowledge search: embeddings unavailable, lexical ranking only', { model: embedder.model, error: why });
      return { hits: lexicalHits.slice(0, limit), mode: 'lexical', degraded: why.slice(0, 300) };
    }
    const fused = reciprocalRankFusion([lexical.map((p) => p.id), nearest.map((h) => h.id)]).slice(0, limit);
    const byId = new Map<string, KnowledgePassage>(lexical.map((p) => [p.id, p]));
    const missing = fused.map((f) => f.id).filter((id) => !byId.has(id));
    for (const p of await loadKbPassages(this.sql, missing)) byId.set(p.id, p);
    const cosine = new Map(nearest.map((h) => [h.id, h.score]));
    const hits = fused.flatMap((f): KnowledgeHit[] => {
      const passage = byId.get(f.id);
      if (!passage) return []; // removed meanwhile
      const [lexicalRank = null, vectorRank = null] = f.ranks;
      return [
        {
          ...passage,
          score: f.score,
          lexicalRank,
          vectorRank,
          lexicalScore: lexicalRank === null ? null : (lexical[lexicalRank - 1]?.score ?? null),
          vectorScore: cosine.get(f.id) ?? null,
        },
      ];
    });
    return { hits, mode: 'fused', degraded: null };
  }
}

export interface EmbedReport {
  model: string;
  /** Passages given a vector in this pass. */
  embedded: number;
  /** Why the pass stopped early (the endpoint failed); the rest wait for the next import. */
  error: string | null;
}

/** Passages embedded per pass at most: an import of a large help center is embedded over several. */
const MAX_PASSAGES_PER_PASS = 100_000;

/**
 * Gives every passage without a vector of the embedder's model one (new passages, and all of
 * them after a model change), a batch at a time. A failing endpoint stops the pass and is
 * reported, never thrown: the passages stay searchable lexically and the next import resumes.
 */
export async function embedPendingPassages(
  sql: SqlExecutor,
  embedder: Embedder,
  batch: number,
  logger: Logger,
  now: () => Date,
): Promise<EmbedReport> {
  const report: EmbedReport = { model: embedder.model, embedded: 0, error: null };
  let after = '';
  while (report.embedded < MAX_PASSAGES_PER_PASS) {
    const pending = await kbPassagesToEmbed(sql, embedder.model, batch, after);
    if (pending.length === 0) break;
    try {
      const vectors = await embedder.embed(pending.map((p) => p.input));
      await setKbEmbeddings(
        sql,
        embedder.model,
        pending.map((p, i) => ({ id: p.id, vector: vectors[i]! })),
        now(),
      );
    } catch (error) {
      report.error = describeError(error).slice(0, 300);
      logger.warn('knowledge embeddings failed; passages stay lexical-only until the next import', {
        model: embedder.model,
        error: report.error,
      });
      break;
    }
    report.embedded += pending.length;
    after = pending.at(-1)!.id;
  }
  return report;
}
