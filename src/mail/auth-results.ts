/**
 * Authentication-Results (RFC 8601) from the operator's own receiving server only. Any other such
 * header is attacker-controlled text and is ignored. Pure.
 */
export type AuthResult = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'temperror' | 'permerror' | 'policy';

export interface AuthVerdict {
  dmarc: AuthResult | null;
  dkim: AuthResult | null;
  spf: AuthResult | null;
}

export const UNKNOWN_VERDICT: AuthVerdict = { dmarc: null, dkim: null, spf: null };
const RESULTS = new Set<AuthResult>(['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror', 'policy']);

function stripComments(value: string): string {
  let out = '';
  let depth = 0;
  for (const char of value) {
    if (char === '(') depth++;
    else if (char === ')' && depth > 0) depth--;
    else if (depth === 0) out += char;
  }
  return out;
}

/**
 * Reads the topmost Authentication-Results header whose authserv-id is the trusted one (the
 * receiving server adds its own on top; lower ones may be forged by the sender).
 */
export function trustedAuthVerdict(headers: readonly string[], trustedAuthservId: string | undefined): AuthVerdict {
  if (!trustedAuthservId) return UNKNOWN_VERDICT;
  for (const header of headers) {
    const parts = stripComments(header)
      .split(';')
      .map((p) => p.trim());
    const authservId = parts[0]?.split(/\s+/)[0]?.toLowerCase();
    if (authservId !== trustedAuthservId) continue;
    const verdict: { dmarc: AuthResult | null; dkim: AuthResult | null; spf: AuthResult | null } = { dmarc: null, dkim: null, spf: null };
    for (const resinfo of parts.slice(1)) {
      const match = /^(dmarc|dkim|spf)\s*=\s*([a-z]+)/i.exec(resinfo);
      if (!match) continue;
      const method = match[1]!.toLowerCase() as keyof AuthVerdict;
      const result = match[2]!.toLowerCase() as AuthResult;
      if (!RESULTS.has(result)) continue;
      // Several DKIM signatures: one passing signature is enough.
      if (verdict[method] === 'pass') continue;
      verdict[method] = result;
    }
    return verdict;
  }
  return UNKNOWN_VERDICT;
}
