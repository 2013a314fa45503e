const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Parses "500ms", "30s", "15m", "72h", "14d", "2w" or a bare number of milliseconds; null if neither. */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$/i.exec(text);
  if (!match) return null;
  const unit = (match[2] ?? 'ms').toLowerCase();
  const factor = UNIT_MS[unit];
  if (factor === undefined) return null;
  return Math.round(Number(match[1]) * factor);
}

/** A duration typed by a person (`--since 7d`): the unit is required, so "7" is refused, not read as 7 ms. */
export function parseDurationWithUnit(text: string): number | null {
  return /^\s*\d+(?:\.\d+)?\s*$/.test(text) ? null : parseDuration(text);
}
