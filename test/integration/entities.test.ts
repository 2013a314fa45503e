import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { linkAddress } from '../../src/app/link-address.ts';
import { findEntity } from '../../src/store/entities.ts';
import { replayFiles } from '../support/replay.ts';

const CORPUS = path.resolve(import.meta.dirname, '../../fixtures/emails/corpus');
const files = (...names: string[]) => names.map((n) => path.join(CORPUS, n));

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
        const result = await linkAddress(db.prisma, 'linda.harper@yahoo.com', marcus!.id);
        expect(result.merged).toBe(linda!.id);
        expect((await findEntity(db.prisma, 'linda.harper@yahoo.com'))!.id).toBe(marcus!.id);
        expect(await db.prisma.thread.count({ where: { entityId: marcus!.id } })).toBe(2);
        expect(await db.prisma.entity.findUnique({ where: { id: linda!.id } })).toBeNull();
      },
    });
  });
});
