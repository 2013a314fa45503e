/**
 * Marks the agent's drafts whose mail bounced, from ingestion's hot path (plain SQL, like
 * ingest-store.ts). A draft is matched by its Message-ID within the mailbox the report came to.
 */
import { z } from 'zod';
import type { SqlExecutor } from './sql.ts';

export interface BounceToRecord {
  mailboxId: string;
  /** Message-IDs the report says it is about (with angle brackets). */
  messageIds: readonly string[];
  /** What the report says went wrong, kept in the draft's `error`. */
  error: string;
}

export interface BouncedDraft {
  id: string;
  threadId: string;
}

const row = z.object({ id: z.string(), threadId: z.string() });

/**
 * Sets `status = 'bounced'` and `error` on the matching drafts. Any status but `discarded` (an
 * operator's decision) moves: `sent` and `sending` are the usual case, and a `draft` or `queued`
 * one was evidently sent from the Drafts folder by a person. A draft already bounced keeps its
 * first diagnostic, so delivering the same report twice changes nothing.
 */
export async function markDraftsBounced(sql: SqlExecutor, bounce: BounceToRecord): Promise<BouncedDraft[]> {
  if (bounce.messageIds.length === 0) return [];
  const rows = await sql.query(
    `UPDATE "Draft" SET "status" = 'bounced', "error" = $3, "updatedAt" = (now() AT TIME ZONE 'UTC')
     WHERE "mailboxId" = $1 AND "messageId" IN (SELECT jsonb_array_elements_text($2::jsonb))
       AND "status" NOT IN ('bounced', 'discarded')
     RETURNING "id", "threadId"`,
    [bounce.mailboxId, JSON.stringify(bounce.messageIds), bounce.error.slice(0, 500)],
  );
  return rows.map((r) => row.parse(r));
}
