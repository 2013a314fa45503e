/**
 * Scoped JSON-line logger on stderr. Addresses and bodies belong at `trace` only. Every configured
 * secret value is masked from every line as a last line of defence, should one slip into an error;
 * so is every sensitive value a customer may have written (card numbers, IBANs, codes and passwords
 * after their labels, national IDs: src/mail/sensitive-values.ts), in the message and in every
 * string of the fields, errors included.
 */
import { maskText } from './mail/sensitive-values.ts';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent';
const LEVELS: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, silent: 99 };

export interface Logger {
  trace(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

export interface LoggerOptions {
  level: LogLevel;
  secrets?: ReadonlyArray<string | undefined>;
  write?: (line: string) => void;
}

export function createLogger(scope: string, options: LoggerOptions): Logger {
  const threshold = LEVELS[options.level];
  const secrets = (options.secrets ?? []).filter((s): s is string => typeof s === 'string' && s.length >= 4);
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const scrub = (text: string): string => secrets.reduce((acc, secret) => acc.split(secret).join('***'), text);

  const log = (level: Exclude<LogLevel, 'silent'>, message: string, fields?: Record<string, unknown>) => {
    if (LEVELS[level] < threshold) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level, scope, message, ...fields }, errorReplacer);
    write(scrub(line));
  };
  return {
    trace: (m, f) => log('trace', m, f),
    debug: (m, f) => log('debug', m, f),
    info: (m, f) => log('info', m, f),
    warn: (m, f) => log('warn', m, f),
    error: (m, f) => log('error', m, f),
    child: (child) => createLogger(`${scope}:${child}`, options),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return maskText(value);
  // A card number logged as a number (13 digits or more) is masked too.
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) >= 1e12) {
    const masked = maskText(String(value));
    return masked === String(value) ? value : masked;
  }
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(code === undefined ? {} : { code }) };
  }
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = createLogger('silent', { level: 'silent' });
