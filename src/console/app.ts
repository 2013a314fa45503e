/**
 * The console's HTTP application and its route table: every page and action is listed here, in
 * one place. Everything but the login form and the stylesheet sits behind the login; every form
 * post behind the CSRF check.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Runtime } from '../app/runtime.ts';
import { AppError, describeError, isAppError } from '../errors.ts';
import { requireLogin, SessionStore } from './auth.ts';
import { describeModel } from '../llm/create-provider.ts';
import { BULL_BOARD_PATH, bullBoardApp } from './bull-board.ts';
import type { ConsoleContext, ConsoleEnv, Session } from './context.ts';
import { sameOriginOnly, verifyCsrf } from './csrf.ts';
import { html } from './html.ts';
import { renderPage } from './layout.ts';
import { LoginThrottle } from './login-throttle.ts';
import { ONE_TIME_LOGIN_PATH, oneTimeLoginRoute, type OneTimeLogin } from './one-time-login.ts';
import { customersPage } from './pages/customers.ts';
import { approveAction, discardAction, draftsPage, editAction, settleAction, takeOverAction } from './pages/drafts.ts';
import { eraseAction, eraseConfirmPage } from './pages/erase.ts';
import { healthPage } from './pages/health.ts';
import { qualityPage } from './pages/quality.ts';
import { loginRoutes } from './pages/login.ts';
import { commitmentsPage } from './pages/commitments.ts';
import {
  correctFactAction,
  deleteFactAction,
  linkAddressAction,
  profilePage,
  promoteCustomerAction,
  setFactAction,
} from './pages/profile.ts';
import { originalMessageDownload, originalMessagePage, promoteThreadAction, threadPage } from './pages/thread.ts';
import { skippedPage } from './pages/skipped.ts';
import { consoleSite, requestGuard } from './request-guard.ts';
import { securityHeaders } from './security-headers.ts';
import { STYLESHEET, STYLESHEET_PATH } from './styles.ts';
import { UPLOAD_PATHS, uploadBodyLimit } from './uploads.ts';
import { importFactsAction } from './pages/import-facts.ts';
import {
  knowledgeDocumentPage,
  knowledgeImportAction,
  knowledgePage,
  knowledgePassageRedirect,
  knowledgeRemoveAction,
} from './pages/knowledge.ts';

const MAX_BODY_BYTES = 1024 * 1024;

function errorPage(c: ConsoleContext, status: 400 | 403 | 404 | 409 | 500, title: string, message: string): Response {
  // The session is unset when the error happened before the login check.
  const session = (c.var as { session?: Session }).session ?? null;
  const body = html`<h1>${title}</h1><p>${message}</p><p><a href="/drafts">Back to the drafts</a></p>`;
  return c.html(renderPage({ title, section: null, session, body }), status);
}

function handleError(error: unknown, c: ConsoleContext): Response {
  if (isAppError(error, 'NOT_FOUND')) return errorPage(c, 404, 'Not found', error.message);
  if (isAppError(error, 'INPUT_INVALID')) return errorPage(c, 400, 'That did not work', error.message);
  if (isAppError(error, 'CONFLICT')) return errorPage(c, 409, 'Changed meanwhile', `${error.message}. Reload the page and try again.`);
  c.get('runtime').logger.error('console request failed', {
    method: c.req.method,
    path: new URL(c.req.url).pathname,
    error: describeError(error),
  });
  return errorPage(c, 500, 'Something went wrong', 'The console could not complete this request; the details are in the log.');
}

export interface ConsoleAppOptions {
  /** The address the server listens on (default CONSOLE_HOST); it is one of the host names answered to. */
  boundHost?: string;
  /** The machine's addresses, answered to when the server listens on all of them (`0.0.0.0`, `::`). */
  interfaceAddresses?: readonly string[];
  /** The login throttle (tests pass one with their own clock). */
  throttle?: LoginThrottle;
  /** The local operator's one-time login link (no CONSOLE_PASSWORD, loopback only). */
  oneTimeLogin?: OneTimeLogin;
}

export function createConsoleApp(runtime: Runtime, password: string, options: ConsoleAppOptions = {}): Hono<ConsoleEnv> {
  if (!password) throw new AppError('CONFIG_INVALID', 'the console needs CONSOLE_PASSWORD');
  const settings = runtime.config.console;
  const site = consoleSite({
    publicUrl: settings.publicUrl,
    trustedProxies: settings.trustedProxies,
    allowedHosts: settings.allowedHosts,
    boundHost: options.boundHost ?? settings.host,
    interfaceAddresses: options.interfaceAddresses ?? [],
  });
  const sessions = new SessionStore(runtime.db, password);
  const login = loginRoutes(password, sessions, options.throttle ?? new LoginThrottle());
  const app = new Hono<ConsoleEnv>();

  app.use('*', securityHeaders(BULL_BOARD_PATH, new Set([STYLESHEET_PATH])));
  // Before anything else reads the request, above all before any session lookup.
  app.use(
    '*',
    requestGuard(site, (host) => runtime.logger.debug('console request refused: host name not allowed', { host })),
  );
  app.use('*', async (c, next) => {
    c.set('runtime', runtime);
    await next();
  });
  const formLimit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.text('The form is too large.', 413) });
  const uploadLimit = uploadBodyLimit(runtime.config.knowledge.uploadMaxBytes);
  app.use('*', (c, next) => (UPLOAD_PATHS.has(new URL(c.req.url).pathname) ? uploadLimit(c, next) : formLimit(c, next)));
  app.onError(handleError);
  app.notFound((c) => errorPage(c, 404, 'Not found', 'There is no page here.'));

  // Open to everyone: the stylesheet and the login form.
  app.get(STYLESHEET_PATH, (c) =>
    c.body(STYLESHEET, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=31536000, immutable' }),
  );
  app.get('/login', login.show);
  app.post('/login', login.submit);
  if (options.oneTimeLogin) app.get(`${ONE_TIME_LOGIN_PATH}/:token`, oneTimeLoginRoute(options.oneTimeLogin, sessions));

  // Everything below needs a session; form posts need its token, Bull Board's API calls our origin.
  app.use(
    '*',
    requireLogin(
      sessions,
      describeModel(runtime.config.llm)
        .replace(/^model: /, '')
        .replace(/ \(.*$/, ''),
    ),
  );
  const formCheck = verifyCsrf();
  const boardCheck = sameOriginOnly();
  const csrfCheck: MiddlewareHandler<ConsoleEnv> = (c, next) => {
    const path = new URL(c.req.url).pathname;
    return path === BULL_BOARD_PATH || path.startsWith(`${BULL_BOARD_PATH}/`) ? boardCheck(c, next) : formCheck(c, next);
  };
  app.use('*', csrfCheck);

  app.get('/', (c) => c.redirect('/drafts', 303));
  app.post('/logout', login.logout);

  app.get('/drafts', draftsPage);
  app.post('/drafts/:id/approve', approveAction);
  app.post('/drafts/:id/edit', editAction);
  app.post('/drafts/:id/discard', discardAction);
  app.post('/drafts/:id/settle', settleAction);
  app.post('/threads/:id/take-over', takeOverAction);

  app.get('/threads/:id', threadPage);
  app.post('/threads/:id/promote', promoteThreadAction);
  app.get('/messages/:id/original', originalMessagePage);
  app.get('/messages/:id/original.eml', originalMessageDownload);

  app.get('/customers', customersPage);
  app.post('/customers/import', importFactsAction);
  app.get('/customers/:id', profilePage);
  app.post('/customers/:id/facts', setFactAction);
  app.post('/customers/:id/promote', promoteCustomerAction);
  app.post('/customers/:id/link', linkAddressAction);
  app.get('/commitments', commitmentsPage);
  app.get('/customers/:id/erase', eraseConfirmPage);
  app.post('/customers/:id/erase', eraseAction);
  app.post('/facts/:id/correct', correctFactAction);
  app.post('/facts/:id/delete', deleteFactAction);

  app.get('/knowledge', knowledgePage);
  app.post('/knowledge/import', knowledgeImportAction);
  app.get('/knowledge/passage/:id', knowledgePassageRedirect);
  app.get('/knowledge/:id', knowledgeDocumentPage);
  app.post('/knowledge/:id/remove', knowledgeRemoveAction);

  app.get('/quality', qualityPage);
  app.get('/skipped', skippedPage);
  app.get('/health', healthPage);
  app.get(`${BULL_BOARD_PATH}/`, (c) => c.redirect(BULL_BOARD_PATH, 308));
  app.route(BULL_BOARD_PATH, bullBoardApp(runtime.queues()));

  return app;
}
