/**
 * The one error catalog. Every error the product raises on purpose carries a `code` from here,
 * and whether retrying can help is decided in this file, not at each call site.
 */
export const ERROR_CODES = {
  CONFIG_INVALID: { retryable: false, exitCode: 2 },
  USAGE: { retryable: false, exitCode: 2 },
  NOT_FOUND: { retryable: false, exitCode: 1 },
  INPUT_INVALID: { retryable: false, exitCode: 1 },
  DB_UNAVAILABLE: { retryable: true, exitCode: 1 },
  DB_LOCKED: { retryable: false, exitCode: 1 },
  REDIS_UNAVAILABLE: { retryable: true, exitCode: 1 },
  MIGRATION_FAILED: { retryable: false, exitCode: 1 },
  QUEUE_PAYLOAD_INVALID: { retryable: false, exitCode: 1 },
  LLM_UNAVAILABLE: { retryable: true, exitCode: 1 },
  LLM_REJECTED: { retryable: false, exitCode: 1 },
  IMAP_FAILED: { retryable: true, exitCode: 1 },
  SMTP_FAILED: { retryable: true, exitCode: 1 },
  SMTP_REJECTED: { retryable: false, exitCode: 1 },
  /** The connection failed after the message may have been handed over: sending again could duplicate it. */
  SMTP_OUTCOME_UNKNOWN: { retryable: false, exitCode: 1 },
  POLICY_INVALID: { retryable: false, exitCode: 2 },
  CONFLICT: { retryable: true, exitCode: 1 },
  /** `support-agent auth`: the provider refused, the operator declined, or the sign-in timed out. */
  AUTH_FAILED: { retryable: false, exitCode: 1 },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Protocol or library detail (server response, command) that helps the caller decide. */
  readonly detail: string | undefined;

  constructor(code: ErrorCode, message: string, options: { detail?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.detail = options.detail;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }
}

export function isAppError(error: unknown, code?: ErrorCode): error is AppError {
  return error instanceof AppError && (code === undefined || error.code === code);
}

/** A message safe to print: the error's own message, never its cause chain (which may hold URLs with passwords). */
export function describeError(error: unknown): string {
  if (error instanceof AppError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}
