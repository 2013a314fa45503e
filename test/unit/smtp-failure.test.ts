import { describe, expect, it } from 'vitest';
import { smtpFailureCode } from '../../src/outbound/smtp-sender.ts';

/** Errors shaped as nodemailer raises them (code, command, responseCode, originalCode). */
function smtpError(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

describe('what an SMTP failure says about the message', () => {
  const cases: Array<[string, Error, ReturnType<typeof smtpFailureCode>]> = [
    [
      '550 at end of DATA: refused for good',
      smtpError('Message failed', { code: 'EMESSAGE', responseCode: 550, command: 'DATA' }),
      'SMTP_REJECTED',
    ],
    ['451 at end of DATA: try later', smtpError('Message failed', { code: 'EMESSAGE', responseCode: 451, command: 'DATA' }), 'SMTP_FAILED'],
    ['421 shutting down', smtpError('closed', { code: 'ECONNECTION', responseCode: 421, command: 'CONN' }), 'SMTP_FAILED'],
    [
      'connection refused',
      smtpError('connect ECONNREFUSED', { code: 'ESOCKET', originalCode: 'ECONNREFUSED', command: 'CONN' }),
      'SMTP_FAILED',
    ],
    ['unknown host', smtpError('getaddrinfo ENOTFOUND', { code: 'EDNS', command: 'CONN' }), 'SMTP_FAILED'],
    ['login refused', smtpError('Invalid login', { code: 'EAUTH', responseCode: 535, command: 'AUTH PLAIN' }), 'SMTP_REJECTED'],
    ['recipient refused', smtpError('Recipient rejected', { code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }), 'SMTP_REJECTED'],
    ['greeting timeout', smtpError('Greeting never received', { code: 'ETIMEDOUT', command: 'CONN' }), 'SMTP_FAILED'],
    ['connection timeout', smtpError('Connection timeout', { code: 'ETIMEDOUT', command: 'CONN' }), 'SMTP_FAILED'],
    [
      'closed mid-transaction without an answer',
      smtpError('Connection closed unexpectedly', { code: 'ECONNECTION', command: 'CONN' }),
      'SMTP_OUTCOME_UNKNOWN',
    ],
    [
      'reset while waiting for the final answer',
      smtpError('read ECONNRESET', { code: 'ESOCKET', originalCode: 'ECONNRESET', command: 'CONN' }),
      'SMTP_OUTCOME_UNKNOWN',
    ],
    ['socket timeout after the data', smtpError('Timeout', { code: 'ETIMEDOUT' }), 'SMTP_OUTCOME_UNKNOWN'],
    ['not an SMTP error at all', new Error('boom'), 'SMTP_OUTCOME_UNKNOWN'],
  ];
  for (const [name, error, expected] of cases) it(name, () => expect(smtpFailureCode(error)).toBe(expected));
});
