/**
 * Log lines for a person at a terminal: `12:04:31 WARN  replay:llm  LLM request failed; retrying
 * attempt=3 delayMs=2085`. The logger writes one JSON object per line (already scrubbed of every
 * secret); this only re-renders that object, so nothing reaches a terminal that would not reach a
 * log file. LOG_FORMAT=json keeps JSON on a terminal; off a terminal it is always JSON.
 */

const LEVEL_LABEL: Record<string, string> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO ', warn: 'WARN ', error: 'ERROR' };

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value) ?? String(value);
}

/** One JSON log line as a short human line; a line that is not a log object is returned as it is. */
export function prettyLogLine(line: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return line;
  const { time, level, scope, message, ...fields } = entry as Record<string, unknown>;
  const clock = typeof time === 'string' ? time.slice(11, 19) : '--:--:--';
  const label = LEVEL_LABEL[String(level)] ?? String(level).toUpperCase();
  const rest = Object.entries(fields).map(([key, value]) => `${key}=${fieldValue(value)}`);
  return [clock, label, String(scope ?? ''), String(message ?? ''), ...rest].join('  ').trimEnd();
}

/** Whether log lines are rendered for a person: `pretty`, or `auto` on a terminal. */
export function wantsPrettyLogs(format: 'auto' | 'json' | 'pretty', isTerminal: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && isTerminal);
}
