import { randomBytes } from 'node:crypto';

/** A short random id with a readable prefix, like the seed's `t_8f12a3`: `e_` entity, `t_` thread, ... */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString('base64url')}`;
}
