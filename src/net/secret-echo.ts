/**
 * Provider texts that may echo what was sent: an OAuth2 endpoint that reflects the request puts
 * the client secret (or the code, the verifier, the refresh token) into its `error_description`.
 * Before such a text reaches an error message, every known secret in it is masked, in each form a
 * reflection takes: as sent, percent-encoded (either hex case, `+` or `%20` for spaces),
 * JSON-escaped, and base64 (standard or URL-safe, with or without padding); and a fragment of it
 * (`FRAGMENT_CHARS` characters or more in a row), as an endpoint that quotes "the first characters
 * of the secret" would show. Linear in the text: fragments are found by a set of the secret's
 * windows, not by trying every substring.
 */

/** What a masked secret reads as. */
export const SECRET_MASK = '[secret]';
/** Shorter values are not masked: four characters match too much ordinary text to be worth it. */
const MIN_SECRET_CHARS = 4;
/** A run of this many characters of a secret (or an encoded form) in a row is masked as a fragment. */
const FRAGMENT_CHARS = 8;

/** The forms a reflected secret takes, longest first (so an encoded form is masked whole). */
function echoForms(secret: string): string[] {
  const base64 = Buffer.from(secret, 'utf8').toString('base64');
  const forms = [
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
    base64,
    base64.replace(/=+$/, ''),
    Buffer.from(secret, 'utf8').toString('base64url'),
  ];
  return [...new Set(forms)].filter((f) => f.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `text` with every echo of each of `secrets` replaced by `[secret]`; undefined and short values are ignored. */
export function maskSecrets(text: string, secrets: ReadonlyArray<string | undefined | null>): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < MIN_SECRET_CHARS) continue;
    for (const form of echoForms(secret)) {
      // Percent-encoding may come back with lower-case hex; everything else is compared exactly.
      out = out.replace(new RegExp(escapeRegExp(form), form.includes('%') ? 'gi' : 'g'), SECRET_MASK);
    }
    out = maskFragments(out, echoForms(secret));
  }
  return out;
}

/** Masks every run of text covered by windows of `FRAGMENT_CHARS` characters taken from `forms`. */
function maskFragments(text: string, forms: readonly string[]): string {
  const windows = new Set<string>();
  for (const form of forms) for (let i = 0; i + FRAGMENT_CHARS <= form.length; i++) windows.add(form.slice(i, i + FRAGMENT_CHARS));
  if (windows.size === 0) return text;
  const covered = new Uint8Array(text.length);
  let any = false;
  for (let i = 0; i + FRAGMENT_CHARS <= text.length; i++) {
    if (!windows.has(text.slice(i, i + FRAGMENT_CHARS))) continue;
    covered.fill(1, i, i + FRAGMENT_CHARS);
    any = true;
  }
  if (!any) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (!covered[i]) out += text[i];
    else if (i === 0 || !covered[i - 1]) out += SECRET_MASK;
  }
  return out;
}
