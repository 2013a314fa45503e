import { readFile } from 'node:fs/promises';
import { AppError } from '../errors.ts';
import { policySchema, type PromotionPolicy } from '../memory/promotion-policy.ts';

/** Reads and validates the promotion policy file; the product refuses to start on a bad one. */
export async function loadPolicyFile(file: string): Promise<PromotionPolicy> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new AppError('POLICY_INVALID', `PROMOTION_POLICY_FILE ${file}: cannot read (${error.code ?? 'error'})`);
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AppError(
      'POLICY_INVALID',
      `PROMOTION_POLICY_FILE ${file}: not JSON (${error instanceof Error ? error.message : 'parse error'})`,
    );
  }
  const parsed = policySchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new AppError('POLICY_INVALID', `PROMOTION_POLICY_FILE ${file}: ${problems.join('; ')}`);
  }
  return parsed.data;
}
