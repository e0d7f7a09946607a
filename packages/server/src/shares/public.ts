import type { FileInfo, Rule, Sorting } from '@filebrowser/contract';
import { checkPassword } from '../auth/passwords.js';
import { AttemptLimiter } from '../auth/rate-limit.js';
import type { AppContext } from '../context.js';
import { AppError, badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import { FileAccess, fileAccessFor } from '../files/access.js';
import { fileInfo } from '../files/info.js';
import { canonicalise, openScope, type Resolved } from '../files/resolver.js';
import { RuleChecker, type RuleOptions } from '../files/rules.js';
import type { StoredShare } from '../store/shares.js';
import type { StoredUser } from '../store/users.js';
import { checkShareAccessToken, shareAccessToken } from './links.js';

/** Public listings are always sorted by name (contract 8.5), whatever the owner prefers. */
const PUBLIC_SORTING: Sorting = { by: 'name', asc: false };

/**
 * The owner's rules seen from inside a share: the share's paths are re-prefixed with where the
 * shared folder lives in the owner's scope, so every rule keeps meaning what the owner wrote. A
 * share reached through a link inside the scope is checked under both of its names.
 */
class ShareRuleChecker extends RuleChecker {
  constructor(
    globalRules: readonly Rule[],
    userRules: readonly Rule[],
    private readonly hideDots: boolean,
    opts: RuleOptions,
    private readonly bases: readonly string[],
  ) {
    super(globalRules, userRules, hideDots, opts);
  }

  private ownerPaths(shareVirtual: string): string[] {
    return this.bases.map((base) =>
      shareVirtual === '/' ? base : base === '/' ? shareVirtual : base + shareVirtual,
    );
  }

  override allowedByRules(shareVirtual: string): boolean {
    return this.ownerPaths(shareVirtual).every((p) => super.allowedByRules(p));
  }

  override check(shareVirtual: string): boolean {
    return this.ownerPaths(shareVirtual).every((p) => {
      const last = p.slice(p.lastIndexOf('/') + 1);
      if (this.hideDots && last.startsWith('.')) return false;
      return super.allowedByRules(p);
    });
  }
}

/** What a public request may reach once the link, its password and its owner checked out. */
export interface OpenedShare {
  share: StoredShare;
  owner: StoredUser;
  /** The owner's view of the disk, and the shared item through it. */
  ownerAccess: FileAccess;
  target: Resolved;
  /** For folder shares: the owner's view re-rooted at the shared folder. */
  folder?: FileAccess;
  /** Handed to the client of a password-protected share so it can build download links. */
  token?: string;
}

export interface PublicRequest {
  hash: string;
  /** The `token` query value. */
  token?: string;
  /** The raw `X-SHARE-PASSWORD` header (URL-encoded by clients). */
  password?: string;
  /** The client address, for throttling password guesses. */
  ip: string;
}

/** Query-style unescaping (`+` is a space), as File Browser's url.QueryUnescape. */
export function decodeSharePassword(header: string): string {
  try {
    return decodeURIComponent(header.replaceAll('+', ' '));
  } catch {
    throw badRequest('the X-SHARE-PASSWORD header is not valid URL encoding');
  }
}

/**
 * Public access to share links (contract 8.5) with what File Browser lacked: password guesses
 * are throttled per client address and per link, the token handed out expires within hours, and
 * every request re-checks the owner's live permissions, rules and scope.
 */
export class PublicShares {
  private readonly byAddress: AttemptLimiter;
  private readonly byShare: AttemptLimiter;

  constructor(private readonly ctx: AppContext) {
    // Share passwords get the same allowance as logins: both guard a secret typed by a person.
    const windowMs = ctx.config.loginRateWindowSeconds * 1000;
    this.byAddress = new AttemptLimiter(ctx.config.loginRateLimit, windowMs);
    this.byShare = new AttemptLimiter(ctx.config.loginRateLimit, windowMs);
  }

  async open(req: PublicRequest): Promise<OpenedShare> {
    // The store drops expired links before it reads, so an expired link is simply unknown.
    const share = req.hash ? this.ctx.store.shares.get(req.hash) : undefined;
    if (!share) throw notFound();
    const token = await this.authorise(share, req);

    const owner = this.ctx.store.users.get(share.userId);
    if (!owner) throw notFound();
    if (!owner.perm.share || !owner.perm.download) {
      throw forbidden('the owner of this link may no longer share it');
    }
    const ownerAccess = await fileAccessFor(this.ctx, owner);
    const target = await ownerAccess.resolve(share.path);
    if (!target.stat) throw notFound();
    const opened: OpenedShare = { share, owner, ownerAccess, target, ...(token !== undefined && { token }) };
    if (!target.stat.isDirectory()) return opened;

    const settings = this.ctx.store.settings.get();
    const bases = new Set([target.virtual]);
    const realVirtual = ownerAccess.scope.virtualOf(target.real);
    if (realVirtual !== undefined) bases.add(realVirtual);
    const rules = new ShareRuleChecker(
      settings.rules,
      owner.rules,
      owner.hideDotfiles,
      {
        onInvalid: (rule, reason) =>
          this.ctx.log.warn({ rule }, `rule cannot be applied as written (${reason}); failing closed`),
      },
      [...bases],
    );
    const scope = await openScope({
      root: target.real,
      scope: '/',
      followExternalSymlinks: this.ctx.config.followExternalSymlinks,
    });
    opened.folder = new FileAccess(scope, rules, owner.perm, PUBLIC_SORTING, owner.hideDotfiles);
    return opened;
  }

  /** Checks the token or the password; answers the token the client should use from now on. */
  private async authorise(share: StoredShare, req: PublicRequest): Promise<string | undefined> {
    if (!share.passwordHash) return undefined;
    const key = this.ctx.store.settings.get().key;
    // A valid token keeps working without renewal: it ends when it expires, whatever the client does.
    if (req.token && checkShareAccessToken(key, share, req.token)) return req.token;

    const password = req.password ? decodeSharePassword(req.password) : '';
    if (!password) throw unauthorized('this link is protected by a password');
    const wait = Math.max(this.byAddress.retryAfter(req.ip), this.byShare.retryAfter(share.hash));
    if (wait > 0) {
      throw new AppError('too_many_requests', 'too many password attempts, try again later', {
        'Retry-After': String(wait),
      });
    }
    if (!(await checkPassword(password, share.passwordHash))) {
      this.byAddress.fail(req.ip);
      this.byShare.fail(share.hash);
      throw unauthorized('wrong password');
    }
    this.byShare.reset(share.hash);
    return shareAccessToken(key, share);
  }

  /**
   * The item a request points at: the shared file itself, or for a folder share the entry
   * `subpath` names below the shared folder (confined to it, rules applied).
   */
  async select(opened: OpenedShare, subpath: string): Promise<{ access: FileAccess; item: Resolved }> {
    if (!opened.folder) return { access: opened.ownerAccess, item: opened.target };
    const item = await opened.folder.resolve(canonicalise(subpath));
    if (!item.stat) throw notFound();
    return { access: opened.folder, item };
  }

  /** The JSON answer of `GET /api/public/share` (contract 8.5). */
  async info(opened: OpenedShare, subpath: string): Promise<FileInfo> {
    const { access, item } = await this.select(opened, subpath);
    const modify = opened.owner.perm.modify;
    let info: FileInfo;
    if (!opened.folder) {
      info = await fileInfo(access, item, {
        content: false,
        modify,
        readHeader: true,
        listingReadHeader: false,
        sorting: PUBLIC_SORTING,
      });
      info.path = '';
      delete info.subtitles;
    } else {
      info = await fileInfo(access, item, {
        content: false,
        modify,
        readHeader: true,
        // File Browser types public listing entries by extension only (contract 8.5).
        listingReadHeader: false,
        sorting: PUBLIC_SORTING,
      });
      // Sub-folders carry the share root's name, as File Browser answers.
      if (info.isDir) info.name = opened.target.name;
    }
    delete info.content;
    if (opened.token !== undefined) info.token = opened.token;
    return info;
  }
}
