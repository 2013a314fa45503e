/** The `auth` command's choices, apart from the command so that `--help` loads no OAuth2 code. */
export const AUTH_PROVIDERS = ['google', 'microsoft', 'custom'] as const;
export type AuthProvider = (typeof AUTH_PROVIDERS)[number];
export const AUTH_FLOWS = ['device', 'loopback'] as const;
export type AuthFlow = (typeof AUTH_FLOWS)[number];
