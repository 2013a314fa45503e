/**
 * Applying a turn's answer to thread state: bounded, cleaned, never trusted blindly. Pure.
 */
import { truncateToTokensFromEnd } from './tokens.ts';
import { countTokens } from './tokens.ts';
import type { ThreadState } from './types.ts';

export interface TurnStateUpdate {
  summary: string;
  openItems: string[];
  currentIntent: string;
  tags: string[];
  resolved: boolean;
}

const MAX_OPEN_ITEMS = 10;
const MAX_ITEM_CHARS = 200;
const MAX_TAGS = 8;

function clean(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function snakeCase(text: string): string {
  return clean(text)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60);
}

/**
 * Keeps the summary under its cap. The model is asked to stay under it; when it does not, the
 * summary is compressed by keeping its most recent sentences, which carry the current state.
 */
export function compressSummary(summary: string, capTokens: number): string {
  const cleaned = clean(summary);
  if (countTokens(cleaned) <= capTokens) return cleaned;
  const sentences = cleaned.split(/(?<=[.!?。！？])\s+/);
  const kept: string[] = [];
  let tokens = 0;
  for (let i = sentences.length - 1; i >= 0; i--) {
    const sentence = sentences[i] ?? '';
    const cost = countTokens(sentence) + 1;
    if (tokens + cost > capTokens) break;
    kept.unshift(sentence);
    tokens += cost;
  }
  return kept.length > 0 ? kept.join(' ') : truncateToTokensFromEnd(cleaned, capTokens);
}

export function applyTurnUpdate(previous: ThreadState, update: TurnStateUpdate, summaryCapTokens: number): ThreadState {
  const openItems = [...new Set(update.openItems.map((i) => clean(i).slice(0, MAX_ITEM_CHARS)).filter(Boolean))].slice(0, MAX_OPEN_ITEMS);
  const tags = [...new Set(update.tags.map(snakeCase).filter(Boolean))].slice(0, MAX_TAGS);
  return {
    subject: previous.subject,
    summary: compressSummary(update.summary, summaryCapTokens) || previous.summary,
    openItems: update.resolved ? [] : openItems,
    currentIntent: snakeCase(update.currentIntent) || previous.currentIntent,
    tags,
    status: update.resolved ? 'resolved' : 'open',
  };
}
