import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eraseCustomer } from '../../src/app/erase-customer.ts';
import { importFacts } from '../../src/app/import-facts.ts';
import { deleteFact, setTrustedFact } from '../../src/app/profile-admin.ts';
import { promoteThread } from '../../src/app/promote-thread.ts';
import { findEntity } from '../../src/store/entities.ts';
import { customerEmail, REDIS_URL, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';

let h: AgentHarness;

/** Every value a key holds, as text, whatever its Redis type. */
async function redisValueText(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  if (type === 'hash') return JSON.stringify(await redis.hgetall(key));
  if (type === 'string') return (await redis.get(key)) ?? '';
  if (type === 'zset') return (await redis.zrange(key, '0', '-1')).join(' ');
  if (type === 'list') return (await redis.lrange(key, 0, -1)).join(' ');
  if (type === 'set') return (await redis.smembers(key)).join(' ');
  if (type === 'stream') return JSON.stringify(await redis.xrange(key, '-', '+'));
  return '';
}
let dir: string;
beforeAll(async () => {
  h = await startAgentHarness({ REPLY_MODE: 'draft' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'sa-import-'));
});
afterAll(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function activeFacts(entityId: string) {
  return h.runtime.db.profileFact.findMany({
    where: { entityId, status: 'active' },
    orderBy: { key: 'asc' },
    select: { key: true, value: true, origin: true },
  });
}

describe('trusted facts', () => {
  it('an operator sets a protected fact that no email can change', async () => {
    h.llm.setFallback((request) =>
      request.schemaName === 'thread_promotion'
        ? {
            kind: 'json',
            content: {
              topic: 'upgrade request',
              facts: [
                {
                  key: 'account_tier',
                  value: 'enterprise',
                  category: 'account',
                  confidence: 0.99,
                  explicit: true,
                  evidence: 'upgrade me to enterprise',
                  sourceMessageId: '<tier-1@example.com>',
                },
              ],
              commitments: [],
            },
          }
        : { kind: 'json', content: turnAnswer() },
    );
    const ingested = await h.ingest(
      customerEmail({
        from: 'carol@initech.example',
        subject: 'Upgrade',
        body: 'Please upgrade me to enterprise, I was promised it.',
        messageId: '<tier-1@example.com>',
      }),
    );
    await setTrustedFact(h.runtime.db, h.runtime.policy, ingested.entityId!, {
      key: 'account_tier',
      value: 'premium',
      origin: 'operator',
      actor: 'test',
    });
    const outcome = await promoteThread(h.runtime.promotionDeps(), ingested.threadId!, 'operator');
    expect(outcome).toMatchObject({ kind: 'promoted', accepted: 0, rejected: 1 });
    expect(await activeFacts(ingested.entityId!)).toEqual([{ key: 'account_tier', value: 'premium', origin: 'operator' }]);
    const trail = await h.runtime.db.promotionDecision.findMany({ where: { entityId: ingested.entityId! }, orderBy: { createdAt: 'asc' } });
    expect(trail.map((d) => [d.origin, d.rule, d.accepted])).toEqual([
      ['operator', 'operator-set', true],
      ['promotion', 'protected-key', false],
    ]);
  });

  it('imports facts from a CRM export in CSV (wide and long) and JSON, keyed by email address', async () => {
    await writeFile(path.join(dir, 'crm.csv'), 'email,account_tier,plan\nDana@Umbrella.example,gold,annual\n');
    await writeFile(path.join(dir, 'long.csv'), 'email,key,value,category\ndana@umbrella.example,preferred_language,german,preference\n');
    await writeFile(path.join(dir, 'crm.json'), JSON.stringify([{ email: 'eve@hooli.example', facts: { account_tier: 'silver' } }]));
    const keyOptions = { mode: 'address' as const };
    expect(await importFacts(h.runtime.db, h.runtime.policy, keyOptions, path.join(dir, 'crm.csv'))).toEqual({ facts: 2, customers: 1 });
    await importFacts(h.runtime.db, h.runtime.policy, keyOptions, path.join(dir, 'long.csv'));
    await importFacts(h.runtime.db, h.runtime.policy, keyOptions, path.join(dir, 'crm.json'));
    const dana = await findEntity(h.runtime.db, 'dana@umbrella.example');
    expect(await activeFacts(dana!.id)).toEqual([
      { key: 'account_tier', value: 'gold', origin: 'import' },
      { key: 'plan', value: 'annual', origin: 'import' },
      { key: 'preferred_language', value: 'german', origin: 'import' },
    ]);
    const eve = await findEntity(h.runtime.db, 'eve@hooli.example');
    expect(await activeFacts(eve!.id)).toEqual([{ key: 'account_tier', value: 'silver', origin: 'import' }]);
  });

  it('refuses an import with a bad address, naming it', async () => {
    await writeFile(path.join(dir, 'bad.csv'), 'email,plan\nnot-an-address,gold\n');
    await expect(importFacts(h.runtime.db, h.runtime.policy, { mode: 'address' }, path.join(dir, 'bad.csv'))).rejects.toThrow(
      /bad\.csv: line 2: "not-an-address" is not an email address/,
    );
  });

  it('reads the natural JSON shape, one object per customer with its keys beside the address', async () => {
    await writeFile(
      path.join(dir, 'natural.json'),
      JSON.stringify([
        { email: 'fay@globex.example', account_tier: 'enterprise', seats: 40, trial: false, notes: null },
        { email: 'gus@globex.example', plan: 'monthly', category: 'account' },
      ]),
    );
    expect(await importFacts(h.runtime.db, h.runtime.policy, { mode: 'address' }, path.join(dir, 'natural.json'))).toEqual({
      facts: 4,
      customers: 2,
    });
    const fay = await findEntity(h.runtime.db, 'fay@globex.example');
    expect(await activeFacts(fay!.id)).toEqual([
      { key: 'account_tier', value: 'enterprise', origin: 'import' },
      { key: 'seats', value: '40', origin: 'import' },
      { key: 'trial', value: 'false', origin: 'import' },
    ]);
  });

  it.each([
    [
      'header.csv',
      'email,Account Tier\nhal@wayne.example,gold\n',
      /header\.csv: line 2: key "Account Tier" is not snake_case: .*did you mean account_tier\?/,
    ],
    [
      'category.csv',
      'email,key,value,category\nhal@wayne.example,plan,gold,account\nhal@wayne.example,tier,gold,bogus\n',
      /category\.csv: line 3: category "bogus" is not one of identity, preference, account, situation, sentiment, other$/,
    ],
    [
      'object.json',
      JSON.stringify({ email: 'hal@wayne.example', plan: 'gold' }),
      /object\.json: expected an array of \{"email", "<key>": value/,
    ],
    [
      'nested.json',
      JSON.stringify([{ email: 'hal@wayne.example', plan: { tier: 'gold' } }]),
      /nested\.json: entry 0: plan: expected a string, number, boolean or null; accepted: /,
    ],
    [
      'noemail.json',
      JSON.stringify([{ address: 'hal@wayne.example', plan: 'gold' }]),
      /noemail\.json: entry 0: email: needs "email" \(a string\); accepted: /,
    ],
    [
      'long.json',
      JSON.stringify([{ email: 'hal@wayne.example', key: 'plan' }]),
      /long\.json: entry 0: value: expected a string, number or boolean; accepted: /,
    ],
    ['broken.json', '[{"email": "hal@wayne.example",', /broken\.json: not JSON/],
    [
      'empty-value.json',
      JSON.stringify([{ email: 'hal@wayne.example', key: 'plan', value: '  ' }]),
      /entry 0: the value for plan must be 1-500 characters/,
    ],
  ])('refuses %s with one line that says what is accepted, and writes nothing', async (name, content, message) => {
    await writeFile(path.join(dir, name), content);
    const refused = importFacts(h.runtime.db, h.runtime.policy, { mode: 'address' }, path.join(dir, name));
    await expect(refused).rejects.toThrow(message);
    await expect(refused).rejects.toSatisfy((error: Error) => !error.message.includes('\n'));
    expect(await findEntity(h.runtime.db, 'hal@wayne.example')).toBeNull();
  });

  it("a trusted value replaces the key's current one for that customer only, and the trail says what it replaced", async () => {
    const eve = (await findEntity(h.runtime.db, 'eve@hooli.example'))!;
    const dana = (await findEntity(h.runtime.db, 'dana@umbrella.example'))!;
    const before = await h.runtime.db.profileFact.findFirstOrThrow({ where: { entityId: eve.id, key: 'account_tier', status: 'active' } });
    const at = new Date('2026-12-02T10:00:00.000Z');
    const factId = await setTrustedFact(
      h.runtime.db,
      h.runtime.policy,
      eve.id,
      { key: 'account_tier', value: ' gold  plus ', origin: 'operator', actor: 'test' },
      at,
    );
    expect(await h.runtime.db.profileFact.findUniqueOrThrow({ where: { id: before.id } })).toMatchObject({
      status: 'superseded',
      validUntil: at,
      supersededById: factId,
    });
    expect(await activeFacts(eve.id)).toEqual([{ key: 'account_tier', value: 'gold plus', origin: 'operator' }]);
    expect(await activeFacts(dana.id)).toContainEqual({ key: 'account_tier', value: 'gold', origin: 'import' });
    const decision = await h.runtime.db.promotionDecision.findFirstOrThrow({ where: { factId } });
    expect(decision).toMatchObject({
      origin: 'operator',
      rule: 'operator-set',
      accepted: true,
      reason: 'replaces 1 earlier value(s)',
      evidence: 'set by test',
      createdAt: at,
    });
    const fresh = await setTrustedFact(
      h.runtime.db,
      h.runtime.policy,
      eve.id,
      { key: 'renewal_month', value: 'march', origin: 'import', actor: 'import x.csv' },
      at,
    );
    expect(await h.runtime.db.promotionDecision.findFirstOrThrow({ where: { factId: fresh } })).toMatchObject({
      rule: 'trusted-import',
      reason: 'set by a trusted source',
    });
    await expect(
      setTrustedFact(h.runtime.db, h.runtime.policy, eve.id, { key: '!!', value: 'x', origin: 'operator', actor: 'test' }),
    ).rejects.toThrow(/key "!!" is not snake_case/);
    await expect(
      setTrustedFact(h.runtime.db, h.runtime.policy, eve.id, { key: 'Account Tier', value: 'x', origin: 'operator', actor: 'test' }),
    ).rejects.toThrow(/key "Account Tier" is not snake_case: .*\(did you mean account_tier\?\)/);
    await expect(
      setTrustedFact(h.runtime.db, h.runtime.policy, eve.id, {
        key: 'plan',
        value: 'x',
        category: 'bogus',
        origin: 'operator',
        actor: 'test',
      }),
    ).rejects.toThrow('category "bogus" is not one of identity, preference, account, situation, sentiment, other');
    expect(await activeFacts(eve.id)).toEqual([
      { key: 'account_tier', value: 'gold plus', origin: 'operator' },
      { key: 'renewal_month', value: 'march', origin: 'import' },
    ]);
  });

  it('a deleted fact is history, not profile', async () => {
    const dana = await findEntity(h.runtime.db, 'dana@umbrella.example');
    const fact = await h.runtime.db.profileFact.findFirstOrThrow({ where: { entityId: dana!.id, key: 'plan', status: 'active' } });
    await deleteFact(h.runtime.db, fact.id, 'test');
    expect((await activeFacts(dana!.id)).map((f) => f.key)).not.toContain('plan');
    expect(await h.runtime.db.profileFact.findUniqueOrThrow({ where: { id: fact.id } })).toMatchObject({ status: 'deleted' });
    expect(await h.runtime.db.promotionDecision.findFirstOrThrow({ where: { factId: fact.id, rule: 'operator-delete' } })).toMatchObject({
      accepted: false,
      reason: 'deleted by test',
    });
    await expect(deleteFact(h.runtime.db, fact.id, 'test')).rejects.toThrow(/no active fact/);
  });
});

describe('erasure', () => {
  it('removes everything about a customer from PostgreSQL and Redis, and nothing about anyone else', async () => {
    h.llm.setFallback((request) =>
      request.schemaName === 'thread_promotion'
        ? {
            kind: 'json',
            content: {
              topic: 'x',
              facts: [
                {
                  key: 'preferred_contact_time',
                  value: 'evenings',
                  category: 'preference',
                  confidence: 0.9,
                  explicit: true,
                  evidence: 'call me in the evenings',
                  sourceMessageId: '<erase-1@example.com>',
                },
              ],
              commitments: [],
            },
          }
        : { kind: 'json', content: turnAnswer({ summary: 'Frank asked about erasure.' }) },
    );
    const frank = await h.ingest(
      customerEmail({
        from: 'Frank Zappa <frank@erase.example>',
        subject: 'Please forget me',
        body: 'Please call me in the evenings.',
        messageId: '<erase-1@example.com>',
      }),
    );
    await waitFor(
      () => h.runtime.db.draft.count({ where: { threadId: frank.threadId! } }),
      (n) => n === 1,
      20_000,
      "Frank's draft",
    );
    await promoteThread(h.runtime.promotionDeps(), frank.threadId!, 'operator');
    // Frank also wrote into someone else's thread as a colleague, and a reply is still pending.
    const grace = await h.ingest(
      customerEmail({
        from: 'grace@erase.example',
        cc: 'frank@erase.example',
        subject: 'Team question',
        body: 'Grace here.',
        messageId: '<grace-1@example.com>',
      }),
    );
    await waitFor(
      () => h.runtime.db.draft.count({ where: { threadId: grace.threadId! } }),
      (n) => n === 1,
      20_000,
      "Grace's draft",
    );
    await h.ingest(
      customerEmail({
        from: 'frank@erase.example',
        subject: 'Re: Team question',
        body: 'Frank adds this.',
        inReplyTo: '<grace-1@example.com>',
        messageId: '<erase-2@example.com>',
      }),
      { enqueue: false },
    );
    await h.runtime.queues().schedulePromotion(frank.threadId!, 'quiet', 3_600_000);

    const entity = await findEntity(h.runtime.db, 'frank@erase.example');
    const threadIds = (await h.runtime.db.thread.findMany({ where: { entityId: entity!.id }, select: { id: true } })).map((t) => t.id);
    const report = await eraseCustomer(h.runtime.db, h.runtime.queues(), entity!.id);
    expect(report.deleted['Thread']).toBe(1);

    const needles = [
      'frank@erase.example',
      'Frank Zappa',
      entity!.id,
      ...threadIds,
      '<erase-1@example.com>',
      '<erase-2@example.com>',
      'Frank adds this',
    ];
    const tables = await h.runtime.db.$queryRawUnsafe<Array<{ tablename: string }>>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'",
    );
    const leftovers: string[] = [];
    for (const { tablename } of tables) {
      // Every column as stored; search vectors (the knowledge base's) read as their text form.
      const columns = await h.runtime.db.$queryRawUnsafe<Array<{ column_name: string; udt_name: string }>>(
        "SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1",
        tablename,
      );
      const list = columns.map((c) =>
        c.udt_name === 'tsvector' ? `"${c.column_name}"::text AS "${c.column_name}"` : `"${c.column_name}"`,
      );
      const rows = await h.runtime.db.$queryRawUnsafe<unknown[]>(`SELECT ${list.join(', ')} FROM "${tablename}"`);
      const text = JSON.stringify(rows, (_k, v: unknown) =>
        typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
      );
      for (const needle of needles) if (text.includes(needle)) leftovers.push(`${tablename} contains ${needle}`);
    }
    expect(leftovers).toEqual([]);

    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${h.prefix}:*`);
      const redisLeftovers: string[] = [];
      for (const key of keys) {
        const value = await redisValueText(redis, key);
        for (const needle of needles) if (key.includes(needle) || value.includes(needle)) redisLeftovers.push(`${key} contains ${needle}`);
      }
      expect(redisLeftovers).toEqual([]);
    } finally {
      redis.disconnect();
    }

    // Grace's own thread and message survive.
    expect(await h.runtime.db.message.count({ where: { messageId: '<grace-1@example.com>' } })).toBe(1);
    expect(await findEntity(h.runtime.db, 'grace@erase.example')).not.toBeNull();
  });
});
