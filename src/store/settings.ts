import { randomBytes } from 'node:crypto';
import type { DbClient } from './client.ts';

/**
 * A value generated once per installation and shared by every process on the same database
 * (e.g. the Message-ID signing secret when MESSAGE_ID_SECRET is not configured).
 */
export async function getOrCreateSecret(db: DbClient, key: string): Promise<string> {
  const created = randomBytes(32).toString('base64url');
  await db.setting.createMany({ data: [{ key, value: created }], skipDuplicates: true });
  const row = await db.setting.findUniqueOrThrow({ where: { key } });
  return row.value;
}
