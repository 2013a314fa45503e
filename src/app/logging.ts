import type { Config } from '../config.ts';
import { createLogger, type Logger } from '../logger.ts';
import { prettyLogLine, wantsPrettyLogs } from './log-format.ts';

function urlPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/** Every secret the configuration holds; the logger masks each of them from every line. */
export function configSecrets(config: Config): string[] {
  return [
    config.imap.password,
    config.smtp.password,
    config.oauth2?.clientSecret,
    config.oauth2?.refreshToken,
    // The mailboxes file's secrets (inline or from env: references).
    ...config.mailboxes.flatMap((m) => [m.imap.password, m.smtp.password, m.oauth2?.clientSecret, m.oauth2?.refreshToken]),
    config.llm.apiKey,
    config.console.password,
    config.trust.messageIdSecret,
    urlPassword(config.databaseUrl),
    urlPassword(config.redisUrl),
  ].filter((s): s is string => typeof s === 'string' && s.length > 0);
}

export function createAppLogger(config: Config, scope = 'support-agent', write?: (line: string) => void): Logger {
  const pretty = !write && wantsPrettyLogs(config.logFormat, process.stderr.isTTY === true);
  const sink = write ?? (pretty ? (line: string) => process.stderr.write(prettyLogLine(line) + '\n') : undefined);
  return createLogger(scope, { level: config.logLevel, secrets: configSecrets(config), ...(sink ? { write: sink } : {}) });
}
