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

/** The DMARC result of the trusted receiving server, with the From domain it was evaluated for. */
export interface TrustedDmarc {
  /** `pass` only when every DMARC result in the header passes; null when the header reports none. */
  result: AuthResult | null;
  /** The `header.from` property of the DMARC result (lower case); null when absent or not agreeing. */
  headerFrom: string | null;
}

/**
 * The DMARC verdict of the topmost Authentication-Results header whose authserv-id is the trusted
 * one, with its `header.from` (RFC 7489 §11.2): what proves the visible From domain was
 * authenticated. Several DMARC results in that header (some servers report one per From domain)
 * pass only when all pass for the same domain. Null when no trusted header is present.
 */
export function trustedDmarc(headers: readonly string[], trustedAuthservId: string | undefined): TrustedDmarc | null {
  if (!trustedAuthservId) return null;
  for (const header of headers) {
    const parts = stripComments(header)
      .split(';')
      .map((p) => p.trim());
    if (parts[0]?.split(/\s+/)[0]?.toLowerCase() !== trustedAuthservId) continue;
    const results: TrustedDmarc[] = [];
    for (const resinfo of parts.slice(1)) {
      const match = /^dmarc\s*=\s*([a-z]+)/i.exec(resinfo);
      if (!match) continue;
      const result = match[1]!.toLowerCase() as AuthResult;
      const from = /(?:^|\s)header\.from\s*=\s*"?([^\s";]+)"?/i.exec(resinfo)?.[1]?.toLowerCase().replace(/\.$/, '') ?? null;
      results.push({ result: RESULTS.has(result) ? result : 'permerror', headerFrom: from });
    }
    if (results.length === 0) return { result: null, headerFrom: null };
    const failing = results.find((r) => r.result !== 'pass');
    if (failing) return failing;
    const domains = new Set(results.map((r) => r.headerFrom));
    return { result: 'pass', headerFrom: domains.size === 1 ? results[0]!.headerFrom : null };
  }
  return null;
}
