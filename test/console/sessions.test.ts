/**
 * Console sessions live in the database: expiry, logout, the size cap, a restart, a password change,
 * and what a reader of the table can (not) do with it. On embedded PGlite, the default database.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SessionStore, sessionExpired } from '../../src/console/auth.ts';
import { type Database } from '../../src/store/database.ts';
import { createMigratedDatabase } from '../support/postgres.ts';
import { openMigratedMemoryDatabase } from '../support/pglite.ts';

let database: Database;
let now = 0;
const clock = () => now;

beforeAll(async () => {
  database = await openMigratedMemoryDatabase();
}, 60_000);

afterAll(async () => {
  await database?.close();
});

beforeEach(async () => {
  now = Date.UTC(2026, 10, 29, 9, 0, 0);
  await database.prisma.consoleSession.deleteMany();
});

const store = (options: ConstructorParameters<typeof SessionStore>[2] = {}, password = 'correct horse') =>
  new SessionStore(database.prisma, password, { now: clock, ...options });

describe('console sessions', () => {
  it('a session is idle-expired or age-expired, whichever comes first', () => {
    expect(sessionExpired({ createdAt: 0, lastSeenAt: 0 }, 100, 100, 250)).toBe(false);
    expect(sessionExpired({ createdAt: 0, lastSeenAt: 0 }, 101, 100, 250)).toBe(true);
    expect(sessionExpired({ createdAt: 0, lastSeenAt: 200 }, 251, 100, 250)).toBe(true);
  });

  it('ends sessions that were idle too long or are too old, and on logout', async () => {
    const sessions = store({ idleMs: 100_000, maxAgeMs: 250_000 });
    const session = await sessions.create();
    expect(session.id).not.toBe(session.csrfToken);
    now += 90_000;
    expect(await sessions.get(session.id)).toMatchObject({ id: session.id, csrfToken: session.csrfToken });
    now += 90_000;
    expect(await sessions.get(session.id)).not.toBeNull();
    now += 80_000;
    expect(await sessions.get(session.id)).toBeNull();

    const idle = await sessions.create();
    now += 100_001;
    expect(await sessions.get(idle.id)).toBeNull();
    const third = await sessions.create();
    await sessions.destroy(third.id);
    expect(await sessions.get(third.id)).toBeNull();
    expect(await sessions.get(undefined)).toBeNull();
    expect(await sessions.get('not-a-session')).toBeNull();
    expect(await database.prisma.consoleSession.count()).toBe(0);
  });

  it('keeps at most maxSessions, dropping the oldest', async () => {
    const sessions = store({ maxSessions: 2 });
    const a = await sessions.create();
    now += 1000;
    const b = await sessions.create();
    now += 1000;
    const c = await sessions.create();
    expect(await sessions.get(a.id)).toBeNull();
    expect(await sessions.get(b.id)).not.toBeNull();
    expect(await sessions.get(c.id)).not.toBeNull();
  });

  it('survives a restart: a new store on the same database knows the session', async () => {
    const session = await store().create();
    expect(await store().get(session.id)).toMatchObject({ csrfToken: session.csrfToken });
  });

  it('changing CONSOLE_PASSWORD ends every session opened under the old one', async () => {
    const session = await store({}, 'old password').create();
    expect(await store({}, 'new password').get(session.id)).toBeNull();
    expect(await store({}, 'old password').get(session.id)).toBeNull();
  });

  it('stores no token a reader of the table could use, nor the password', async () => {
    const session = await store().create();
    const row = await database.prisma.consoleSession.findFirstOrThrow();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(session.id);
    expect(stored).not.toContain('correct horse');
    expect(await store().get(row.tokenHash)).toBeNull();
  });

  it('records activity at most once a minute, and an active session does not idle out', async () => {
    const sessions = store({ idleMs: 120_000 });
    const session = await sessions.create();
    const lastSeen = async () => (await database.prisma.consoleSession.findFirstOrThrow()).lastSeenAt.getTime();
    now += 30_000;
    await sessions.get(session.id);
    expect(await lastSeen()).toBe(now - 30_000);
    now += 60_000;
    await sessions.get(session.id);
    expect(await lastSeen()).toBe(now);
    now += 100_000;
    expect(await sessions.get(session.id)).not.toBeNull();
  });
});

describe.each([
  [
    'embedded PGlite',
    async () => {
      const db = await openMigratedMemoryDatabase();
      return { database: db, cleanup: () => db.close() };
    },
  ],
  ['PostgreSQL', createMigratedDatabase],
])('pruning on %s', (_name, open) => {
  let db: Database;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ database: db, cleanup } = await open());
  }, 60_000);
  afterAll(async () => {
    await cleanup?.();
  });

  it('a new login ends idle sessions, then keeps the newest live ones up to the cap', async () => {
    now = Date.UTC(2026, 10, 29, 9, 0, 0);
    const sessions = new SessionStore(db.prisma, 'pw', { now: clock, idleMs: 100_000, maxSessions: 2 });
    const older = await sessions.create();
    now += 50_000;
    const idle = await sessions.create();
    now += 50_000;
    expect(await sessions.get(older.id)).not.toBeNull();
    now += 70_000;
    // `idle` was last seen 120 s ago: it ends, and does not take one of the two places from `older`.
    const newest = await sessions.create();
    expect(await db.prisma.consoleSession.count()).toBe(2);
    expect(await sessions.get(older.id)).not.toBeNull();
    expect(await sessions.get(newest.id)).not.toBeNull();
    expect(await sessions.get(idle.id)).toBeNull();
    now += 1_000;
    await sessions.create();
    expect(await sessions.get(older.id)).toBeNull();
    expect(await db.prisma.consoleSession.count()).toBe(2);
  });
});
