/**
 * Review-console logins (`ConsoleSession`): one row per session, keyed by the SHA-256 of the
 * cookie's token. Hashing, expiry rules and password checks live in `src/console/auth.ts`.
 */
import type { DbClient } from './client.ts';

export interface ConsoleSessionRecord {
  tokenHash: string;
  csrfToken: string;
  /** HMAC of the token keyed with the console password the session was opened under. */
  passwordCheck: string;
  createdAt: Date;
  lastSeenAt: Date;
}

const SESSION_FIELDS = { tokenHash: true, csrfToken: true, passwordCheck: true, createdAt: true, lastSeenAt: true } as const;

export async function insertConsoleSession(db: DbClient, session: ConsoleSessionRecord): Promise<void> {
  await db.consoleSession.create({ data: session });
}

export async function findConsoleSession(db: DbClient, tokenHash: string): Promise<ConsoleSessionRecord | null> {
  return db.consoleSession.findUnique({ where: { tokenHash }, select: SESSION_FIELDS });
}

/** Ends one session; a session already gone is no error (logout twice, two tabs). */
export async function deleteConsoleSession(db: DbClient, tokenHash: string): Promise<void> {
  await db.consoleSession.deleteMany({ where: { tokenHash } });
}

export async function touchConsoleSession(db: DbClient, tokenHash: string, at: Date): Promise<void> {
  await db.consoleSession.updateMany({ where: { tokenHash }, data: { lastSeenAt: at } });
}

/**
 * Ends sessions idle since before `idleBefore` or created before `createdBefore`, and of the rest
 * all but the `keep` newest, in one statement. How many ended.
 */
export async function pruneConsoleSessions(db: DbClient, limits: { idleBefore: Date; createdBefore: Date; keep: number }): Promise<number> {
  const { idleBefore, createdBefore, keep } = limits;
  return db.$executeRaw`
    DELETE FROM "ConsoleSession"
    WHERE "lastSeenAt" < ${idleBefore} OR "createdAt" < ${createdBefore}
       OR "tokenHash" NOT IN (
         SELECT "tokenHash" FROM "ConsoleSession"
         WHERE "lastSeenAt" >= ${idleBefore} AND "createdAt" >= ${createdBefore}
         ORDER BY "createdAt" DESC LIMIT ${keep})`;
}
