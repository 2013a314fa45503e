/**
 * `support-agent auth <google|microsoft|custom>`: walks the operator through granting the agent a
 * refresh token for the mailbox (device code or a browser redirect to loopback) and prints the
 * settings for MAIL_AUTH=oauth2 once, on stdout or into a new 0600 file. Prompts go to stderr;
 * tokens and the client secret never do.
 */
import { writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { loadOAuth2Client, OAUTH2_TOKEN_URLS } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { runDeviceFlow, runLoopbackFlow, type ObtainedGrant, type OAuth2Client } from '../../net/oauth2-grant.ts';
import { output } from '../output.ts';

import type { AuthFlow, AuthProvider } from './auth-choices.ts';

export interface AuthOptions {
  clientId?: string;
  clientSecret?: string;
  tenant?: string;
  flow?: AuthFlow;
  authUrl?: string;
  tokenUrl?: string;
  deviceUrl?: string;
  scope?: string;
  /** Milliseconds. */
  timeout: number;
  out?: string;
}

/** Everything a flow needs, resolved from the provider's defaults, the options and the environment. */
export interface AuthPlan {
  flow: AuthFlow;
  client: OAuth2Client;
  tokenUrl: string;
  authUrl: string | undefined;
  deviceUrl: string | undefined;
  scope: string | undefined;
  extraParams: Record<string, string>;
}

const MICROSOFT_SCOPE = 'offline_access https://outlook.office.com/IMAP.AccessAsUser.All https://outlook.office.com/SMTP.Send';
const GOOGLE_SCOPE = 'https://mail.google.com/';

interface ProviderDefaults {
  flow?: AuthFlow;
  authUrl?: string;
  tokenUrl?: string;
  deviceUrl?: string;
  scope?: string;
  extraParams?: Record<string, string>;
  /** Why a flow cannot work with this provider, if one cannot. */
  noFlow?: Partial<Record<AuthFlow, string>>;
}

function providerDefaults(provider: AuthProvider, tenant: string): ProviderDefaults {
  switch (provider) {
    case 'google':
      return {
        flow: 'loopback',
        authUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
        tokenUrl: OAUTH2_TOKEN_URLS.google!,
        scope: GOOGLE_SCOPE,
        // A refresh token only comes with offline access, and again only with a fresh consent.
        extraParams: { access_type: 'offline', prompt: 'consent' },
        noFlow: { device: "Google's device flow does not grant mail scopes: use the loopback flow" },
      };
    case 'microsoft': {
      const base = `https://login.microsoftonline.com/${tenant}/oauth2/v2.0`;
      return {
        flow: 'device',
        authUrl: `${base}/authorize`,
        tokenUrl: `${base}/token`,
        deviceUrl: `${base}/devicecode`,
        scope: MICROSOFT_SCOPE,
      };
    }
    case 'custom':
      return {};
  }
}

/** Resolves the flow and endpoints; a missing or contradictory option is a one-line usage error. */
export function planAuth(
  provider: AuthProvider,
  options: Omit<AuthOptions, 'timeout' | 'out'>,
  env: { clientId?: string; clientSecret?: string },
): AuthPlan {
  const tenant = options.tenant ?? 'common';
  if (options.tenant !== undefined && provider !== 'microsoft') throw usage('--tenant is for microsoft only');
  if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,99}$/.test(tenant))
    throw usage('--tenant must be a tenant id, a domain, organizations, consumers or common');
  const defaults = providerDefaults(provider, tenant);
  const clientId = options.clientId ?? env.clientId;
  if (!clientId) throw usage('needs --client-id or OAUTH2_CLIENT_ID (the application id of your app registration)');
  const clientSecret = options.clientSecret ?? env.clientSecret;
  const tokenUrl = options.tokenUrl ?? defaults.tokenUrl;
  if (!tokenUrl) throw usage('needs --token-url');
  const authUrl = options.authUrl ?? defaults.authUrl;
  const deviceUrl = options.deviceUrl ?? defaults.deviceUrl;
  const flow = options.flow ?? defaults.flow ?? (options.deviceUrl ? 'device' : options.authUrl ? 'loopback' : undefined);
  if (!flow) throw usage('needs --device-url (device-code flow) or --auth-url (browser redirect flow)');
  const impossible = defaults.noFlow?.[flow];
  if (impossible && !(flow === 'device' ? options.deviceUrl : options.authUrl)) throw usage(impossible);
  if (flow === 'device' && !deviceUrl) throw usage('the device flow needs --device-url');
  if (flow === 'loopback' && !authUrl) throw usage('the loopback flow needs --auth-url');
  if (provider === 'google' && !clientSecret)
    throw usage('google needs --client-secret or OAUTH2_CLIENT_SECRET (the "Desktop app" client\'s secret)');
  return {
    flow,
    client: { clientId, ...(clientSecret ? { clientSecret } : {}) },
    tokenUrl,
    authUrl,
    deviceUrl,
    scope: options.scope ?? defaults.scope,
    extraParams: defaults.extraParams ?? {},
  };
}

/**
 * The settings for the agent's environment, one `NAME=value` line each (shell and .env quoting).
 * The client secret is not repeated: the operator has it.
 */
export function settingsLines(provider: AuthProvider, plan: AuthPlan, grant: ObtainedGrant): string {
  const lines = ['MAIL_AUTH=oauth2', `OAUTH2_PROVIDER=${provider}`];
  if (plan.tokenUrl !== OAUTH2_TOKEN_URLS[provider]) lines.push(`OAUTH2_TOKEN_URL=${quote(plan.tokenUrl)}`);
  lines.push(`OAUTH2_CLIENT_ID=${quote(plan.client.clientId)}`);
  if (plan.client.clientSecret) lines.push('# OAUTH2_CLIENT_SECRET: the client secret used here (not printed)');
  // Microsoft's v2 endpoint asks for the scope again on each refresh; other providers keep the granted one.
  if (plan.scope && provider !== 'google') lines.push(`OAUTH2_SCOPE=${quote(plan.scope)}`);
  lines.push(`OAUTH2_REFRESH_TOKEN=${quote(grant.refreshToken)}`);
  return `${lines.join('\n')}\n`;
}

/** Bare when safe in a shell and a .env file, else single-quoted. */
function quote(value: string): string {
  if (/^[A-Za-z0-9._~+/=:@%,-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

const usage = (message: string) => new AppError('USAGE', message);

export async function runAuth(provider: AuthProvider, options: AuthOptions): Promise<void> {
  const plan = planAuth(provider, options, loadOAuth2Client());
  // Checked before the sign-in, so the operator does not sign in for nothing.
  if (options.out !== undefined && existsSync(options.out))
    throw usage(`${options.out} already exists: name a new file (it is created with mode 0600)`);
  const say = (text: string) => output().err(`${text}\n`);
  const timeoutMs = options.timeout;
  let grant: ObtainedGrant;
  if (plan.flow === 'device') {
    grant = await runDeviceFlow({
      deviceUrl: plan.deviceUrl!,
      tokenUrl: plan.tokenUrl,
      client: plan.client,
      scope: plan.scope,
      timeoutMs,
      onPrompt: (prompt) => {
        say(`To sign in, open ${prompt.verificationUri} and enter the code ${prompt.userCode}`);
        if (prompt.verificationUriComplete) say(`(or open ${prompt.verificationUriComplete})`);
        say(
          `Sign in as the mailbox (or a user with access to it). Waiting up to ${describeWait(Math.min(timeoutMs, prompt.expiresInS * 1000))}...`,
        );
      },
    });
  } else {
    grant = await runLoopbackFlow({
      authUrl: plan.authUrl!,
      tokenUrl: plan.tokenUrl,
      client: plan.client,
      scope: plan.scope,
      extraParams: plan.extraParams,
      timeoutMs,
      onPrompt: (url) => {
        say('Open this address in a browser on this machine and sign in as the mailbox (or a user with access to it):');
        say(url);
        say(`Waiting up to ${describeWait(timeoutMs)} for the browser to come back to this command...`);
      },
    });
  }
  const settings = settingsLines(provider, plan, grant);
  if (options.out !== undefined) {
    try {
      await writeFile(options.out, settings, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? 'write failed';
      throw new AppError('AUTH_FAILED', `signed in, but ${options.out} could not be written (${reason}): run the command again`);
    }
    say(`Signed in. The settings for MAIL_AUTH=oauth2 are in ${options.out} (mode 0600): add them to the agent's environment.`);
  } else {
    say("Signed in. Add these settings to the agent's environment (.env), with IMAP_HOST, IMAP_USER and SMTP_* as in docs/mailboxes.md:");
    output().out(settings);
  }
}

function describeWait(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}
