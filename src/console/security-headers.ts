/**
 * Response headers for every console response. The pages run no script at all, so their policy
 * forbids scripts outright; Bull Board is a React app with inline styles and gets a policy that
 * allows only its own files. Pages hold customer data, so nothing is cached.
 */
import type { MiddlewareHandler } from 'hono';
import type { ConsoleEnv } from './context.ts';

const PAGE_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const BULL_BOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
].join('; ');

export function securityHeaders(bullBoardPath: string, cacheablePaths: ReadonlySet<string>): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    await next();
    const path = new URL(c.req.url).pathname;
    const headers = c.res.headers;
    headers.set('Content-Security-Policy', path === bullBoardPath || path.startsWith(`${bullBoardPath}/`) ? BULL_BOARD_CSP : PAGE_CSP);
    headers.set('X-Content-Type-Options', 'nosniff');
    headers.set('X-Frame-Options', 'DENY');
    // Not no-referrer: with it Chromium sends `Origin: null` on our own form posts, defeating the origin check.
    headers.set('Referrer-Policy', 'same-origin');
    headers.set('Cross-Origin-Opener-Policy', 'same-origin');
    headers.set('Cross-Origin-Resource-Policy', 'same-origin');
    if (!cacheablePaths.has(path) && !path.startsWith(`${bullBoardPath}/static/`)) headers.set('Cache-Control', 'no-store');
  };
}
