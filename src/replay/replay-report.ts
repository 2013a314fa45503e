/**
 * The replay report: a stable JSON interface for tests and tools (see docs/evaluation.md "Replay and its report").
 */
import type { SkipReason } from '../mail/classify.ts';
import type { SkippedAttachment } from '../store/attachment-skips.ts';
import type { ReplaySections } from '../store/replay-sections.ts';

export interface ReplayReport extends ReplaySections {
  messages: Array<{
    file: string;
    messageId: string;
    threadId: string | null;
    entityId: string | null;
    outcome: 'processed' | 'skipped';
    skipReason: SkipReason | null;
    text: string;
  }>;
  /** Attachments not read, each with the reason (too large, a bomb, a reader that died or ran out of time). */
  skippedAttachments: SkippedAttachment[];
  /** What went wrong, per message or thread; the replay goes on after each (the report is always written). */
  failures: ReplayFailure[];
  /** Where the virtual clock stopped, and whether it ran on past the last mail (`--no-settle` stops it there). */
  clock: { endedAt: string; settled: boolean };
}

export interface ReplayFailure {
  /** The .eml file being replayed when it happened. */
  file: string | null;
  threadId: string | null;
  stage: 'read' | 'ingest' | 'turn' | 'promotion' | 'outbox';
  error: string;
}
