import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linkAddress } from '../../src/app/link-address.ts';
import { loadPolicyFile } from '../../src/app/policy-file.ts';
import { setTrustedFact } from '../../src/app/profile-admin.ts';
import { loadConfig } from '../../src/config.ts';
import { listDecisions } from '../../src/store/decision-trail.ts';
import { activeFacts } from '../../src/store/facts.ts';
import { findEntity } from '../../src/store/entities.ts';
import { replayFiles } from '../support/replay.ts';

const CORPUS = path.resolve(import.meta.dirname, '../../fixtures/emails/corpus');
const files = (...names: string[]) => names.map((n) => path.join(CORPUS, n));

const policy = await loadPolicyFile(loadConfig({}).memory.policyFile);

describe('who is a customer', () => {
  it('ENTITY_KEY=domain groups colleagues of one company into one profile, but never free-mail users', async () => {
    const report = await replayFiles(
      files(
        '012-outlook-desktop-enterprise-upgrade-cc-colleague.eml',
        '013-outlook-mac-cc-colleague-reply-all.eml',
        '007-outlook-web-password-reset.eml',
        '010-yahoo-same-subject-different-customer.eml',
      ),
      { env: { ENTITY_KEY: 'domain' } },
    );
    const byFile = new Map(report.messages.map((m) => [m.file, m]));
    expect(byFile.get('012-outlook-desktop-enterprise-upgrade-cc-colleague.eml')!.entityId).toBe(
      byFile.get('013-outlook-mac-cc-colleague-reply-all.eml')!.entityId,
    );
    const globex = report.profiles.find(
      (p) => p.entityId === byFile.get('012-outlook-desktop-enterprise-upgrade-cc-colleague.eml')!.entityId,
    )!;
    expect(globex.addresses.every((a) => a.endsWith('@globex.example'))).toBe(true);
    expect(globex.name).toBe('globex.example');
    expect(byFile.get('007-outlook-web-password-reset.eml')!.entityId).not.toBe(
      byFile.get('010-yahoo-same-subject-different-customer.eml')!.entityId,
    );
  });

  it('link attaches another address to a customer and merges the profile it had on its own', async () => {
    await replayFiles(files('007-outlook-web-password-reset.eml', '010-yahoo-same-subject-different-customer.eml'), {
      inspect: async (db) => {
        const marcus = await findEntity(db.prisma, 'marcus.reid@outlook.com');
        const linda = await findEntity(db.prisma, 'linda.harper@yahoo.com');
        const result = await linkAddress(db.prisma, policy, 'linda.harper@yahoo.com', marcus!.id);
        expect(result.merged).toBe(linda!.id);
        expect((await findEntity(db.prisma, 'linda.harper@yahoo.com'))!.id).toBe(marcus!.id);
        expect(await db.prisma.thread.count({ where: { entityId: marcus!.id } })).toBe(2);
        expect(await db.prisma.entity.findUnique({ where: { id: linda!.id } })).toBeNull();
      },
    });
  });

  it('link settles facts the two profiles disagree on by the policy, and says so in why', async () => {
    await replayFiles(files('007-outlook-web-password-reset.eml', '010-yahoo-same-subject-different-customer.eml'), {
      inspect: async (db) => {
        const marcus = (await findEntity(db.prisma, 'marcus.reid@outlook.com'))!;
        const linda = (await findEntity(db.prisma, 'linda.harper@yahoo.com'))!;
        const day = (n: number) => new Date(Date.UTC(2026, 10, n, 9));
        // The operator set Marcus's tier; an import later gave Linda's profile another one.
        await setTrustedFact(
          db.prisma,
          policy,
          marcus.id,
          { key: 'account_tier', value: 'Business', origin: 'operator', actor: 'cli' },
          day(1),
        );
        await setTrustedFact(
          db.prisma,
          policy,
          linda.id,
          { key: 'account_tier', value: 'Starter', origin: 'import', actor: 'import' },
          day(2),
        );
        // Email facts: each profile learnt a company; Linda's statement is the more recent one.
        const emailFact = (entityId: string, key: string, value: string, category: string, validFrom: Date) =>
          db.prisma.profileFact.create({
            data: {
              id: `f_${entityId}_${key}_${value}`.replace(/\W/g, '_'),
              entityId,
              key,
              value,
              category,
              confidence: 0.9,
              origin: 'email',
              createdAt: validFrom,
              validFrom,
            },
          });
        await emailFact(marcus.id, 'company', 'Globex', 'identity', day(3));
        await emailFact(linda.id, 'company', 'Initech', 'identity', day(5));
        // A multi-valued key keeps both values, but only one copy of a value both had.
        await emailFact(marcus.id, 'order_number', 'A-100', 'account', day(3));
        await emailFact(linda.id, 'order_number', 'A-200', 'account', day(4));
        await emailFact(linda.id, 'order_number', 'a-100', 'account', day(6));

        const result = await linkAddress(db.prisma, policy, 'linda.harper@yahoo.com', marcus.id, day(10));
        expect(result.merged).toBe(linda.id);
        const facts = await activeFacts(db.prisma, marcus.id);
        const values = (key: string) =>
          facts
            .filter((f) => f.key === key)
            .map((f) => f.value)
            .sort();
        expect(values('account_tier')).toEqual(['Business']);
        expect(values('company')).toEqual(['Initech']);
        expect(values('order_number')).toEqual(['A-200', 'a-100']);

        const trail = await listDecisions(db.prisma, marcus.id, { order: 'oldest-first' });
        const merged = trail.filter((d) => d.rule === 'merged-on-link');
        expect(merged.map((d) => [d.key, d.value, d.origin, d.accepted])).toEqual(
          expect.arrayContaining([
            ['account_tier', 'Starter', 'link', false],
            ['company', 'Globex', 'link', false],
            ['order_number', 'A-100', 'link', false],
          ]),
        );
        // The replay's own promoted facts (the offline provider reads names and companies) may merge too;
        // of the keys set up here, exactly these three settled.
        expect(merged.filter((d) => ['account_tier', 'company', 'order_number'].includes(d.key))).toHaveLength(3);
        expect(merged.find((d) => d.key === 'account_tier')!.reason).toMatch(/operator's value wins/);
        const retired = await db.prisma.profileFact.findMany({ where: { entityId: marcus.id, status: 'superseded' } });
        expect(retired.every((f) => f.retiredAt?.getTime() === day(10).getTime())).toBe(true);
      },
    });
  });
});
