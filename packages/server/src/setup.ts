import type { AppContext } from './context.js';
import { createAccount } from './auth/accounts.js';
import { hashPassword, randomPassword } from './auth/passwords.js';
import { ALL_PERMISSIONS } from './store/users.js';
import { defaultSettings } from './store/settings.js';

export interface QuickSetupOptions {
  username: string;
  /** A bcrypt hash (as File Browser's --password takes it), or "" to generate a password. */
  passwordHash: string;
  noauth: boolean;
}

export interface QuickSetupResult {
  username: string;
  /** The generated password, to be shown once on the console and never logged. */
  generatedPassword?: string;
}

/**
 * First start on an empty database: default settings and one administrator.
 * There is never a default password: either the caller gave a hash or one is generated.
 */
export async function quickSetup(ctx: AppContext, opts: QuickSetupOptions): Promise<QuickSetupResult> {
  const settings = defaultSettings();
  if (opts.noauth) settings.authMethod = 'noauth';
  await ctx.store.settings.save(settings);
  const generatedPassword = opts.passwordHash ? undefined : randomPassword(12);
  // Random bytes need no check against the common passwords (a 15 MB list kept once loaded).
  const hash = opts.passwordHash || (await hashPassword(generatedPassword!, ctx.config.bcryptCost));
  await createAccount(
    ctx,
    { username: opts.username || 'admin', perm: { ...ALL_PERMISSIONS }, scope: '.' },
    hash,
    'setup',
    { passwordIsHash: true, createHome: false },
  );
  return { username: opts.username || 'admin', generatedPassword };
}
