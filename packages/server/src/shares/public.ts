import type { FileInfo, Sorting } from '@filebrowser/contract';
import type { Caller } from '../auth/caller.js';
import { checkPassword } from '../auth/passwords.js';
import { may } from '../auth/policy.js';
import { countersFor, GuessThrottle } from '../auth/rate-limit.js';
import type { AppContext } from '../context.js';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import { accessTerms, fileAccessFor, type FileAccess } from '../files/access/access.js';
import { identity } from '../files/access/identity.js';
import { fileInfo } from '../files/listing/info.js';
import { canonicalise, type Opened } from '../files/access/resolver.js';
import type { StoredShare } from '../store/shares.js';
import type { StoredUser } from '../store/users.js';
import { checkShareAccessToken, shareAccessToken } from './links.js';

/** Public listings are always sorted by name (contract 8.5), whatever the owner prefers. */
const PUBLIC_SORTING: Sorting = { by: 'name', asc: false };

/** What a public request may reach once the link, its password and its owner checked out. */
export interface OpenedShare {
  share: StoredShare;
  owner: StoredUser;
  /** The owner's view of the disk, and the shared item through it (held open until `close`). */
  ownerAccess: FileAccess;
  target: Opened;
  /** For folder shares: the owner's view narrowed to the shared folder. */
  folder?: FileAccess;
  /** Handed to the client of a password-protected share so it can build download links. */
  token?: string;
  close(): Promise<void>;
}

export interface PublicRequest {
  hash: string;
  /** The `token` query value. */
  token?: string;
  /** The raw `X-SHARE-PASSWORD` header (URL-encoded by clients). */
  password?: string;
  /** The client address, for throttling password guesses. */
  ip: string;
  /** Told of a wrong password (the same record and log line as a failed sign-in). */
  onWrongPassword?: () => void;
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
 * are throttled per client address and per (address, link) pair, with a tighter allowance for a
 * link under attack from many addresses (auth/rate-limit.ts), the token handed out expires within hours, and
 * every request re-checks the owner's live permissions, rules and scope.
 */
export class PublicShares {
  private readonly throttle: GuessThrottle;

  constructor(private readonly ctx: AppContext) {
    // Share passwords get the same allowance as logins: both guard a secret typed by a person.
    this.throttle = new GuessThrottle(
      ctx.config.loginRateLimit,
      ctx.config.loginRateWindowSeconds * 1000,
      'too many password attempts, try again later',
      countersFor(ctx.store, 'share'),
    );
  }

  async open(req: PublicRequest): Promise<OpenedShare> {
    // The store drops expired links before it reads, so an expired link is simply unknown.
    const share = req.hash ? await this.ctx.store.shares.get(req.hash) : undefined;
    if (!share) throw notFound();
    const token = await this.authorise(share, req);

    const owner = await this.ownerNow(share);
    // The owner's access as it is now: the item must still lie in the owner's scope, pass the
    // owner's rules and stay clear of the server's private paths, or the link serves nothing.
    const ownerAccess = await fileAccessFor(this.ctx, owner);
    if (share.rootId !== ownerAccess.root.id) throw notFound();
    const virtual = ownerAccess.virtualOfRootPath(share.rootPath);
    if (virtual === undefined) throw notFound('the shared item is no longer in its owner’s reach');
    const target = await ownerAccess.open(virtual);
    try {
      if (!target.stat || !target.node) throw notFound();
      await this.assertSameItem(share, identity(await target.node.statNs()));
      const opened: OpenedShare = {
        share,
        owner,
        ownerAccess,
        target,
        ...(token !== undefined && { token }),
        close: () => target.close(),
      };
      if (target.stat.isDirectory()) opened.folder = ownerAccess.narrow(target, PUBLIC_SORTING);
      return opened;
    } catch (err) {
      await target.close();
      throw err;
    }
  }

  /**
   * The object opened must be the one shared: something that took its place (the item deleted or
   * moved by anything but this server, a runner command, a sync tool) is answered as a deleted link
   * is. A link made before identities were recorded takes that of the item it finds first.
   */
  private async assertSameItem(share: StoredShare, opened: string): Promise<void> {
    if (share.itemId === '') await this.ctx.store.shares.recordItem(share.hash, opened);
    else if (share.itemId !== opened) throw notFound();
  }

  /** The link's owner as stored now, refused when gone or no longer allowed to share. */
  private async ownerNow(share: StoredShare): Promise<StoredUser> {
    const owner = await this.ctx.store.users.get(share.userId);
    if (!owner) throw notFound();
    if (!may(owner.perm, 'share')) throw forbidden('the owner of this link may no longer share it');
    return owner;
  }

  /**
   * The visitor of an opened link as a caller, for work that outlives the check of its request
   * (an archive read member by member): it acts as the link's owner for as long as the link is
   * there unchanged (same item, same password), the owner exists and may share, and the owner's
   * scope and rules are as they were; the next member after any change is refused.
   */
  visitor(opened: OpenedShare): Caller {
    const { share } = opened;
    const terms = accessTerms(this.ctx, opened.owner);
    return {
      userId: share.userId,
      confinedTo: undefined,
      now: async () => {
        const current = await this.ctx.store.shares.get(share.hash);
        if (
          !current ||
          current.rootId !== share.rootId ||
          current.rootPath !== share.rootPath ||
          current.passwordHash !== share.passwordHash
        ) {
          throw notFound('the link was removed or changed');
        }
        const owner = await this.ownerNow(share);
        if (accessTerms(this.ctx, owner) !== terms) {
          throw forbidden('the owner’s scope or rules changed since it started');
        }
        return owner;
      },
    };
  }

  /** Checks the token or the password; answers the token the client should use from now on. */
  private async authorise(share: StoredShare, req: PublicRequest): Promise<string | undefined> {
    if (!share.passwordHash) return undefined;
    const grants = this.ctx.store.shareGrants;
    // A valid token keeps working without renewal: it ends when it expires, whatever the client does.
    if (req.token && (await checkShareAccessToken(grants, share, req.token))) return req.token;

    const password = req.password ? decodeSharePassword(req.password) : '';
    if (!password) throw unauthorized('this link is protected by a password');
    // Counted before the check: parallel guesses cannot outrun the limit.
    const attempt = await this.throttle.reserve(req.ip, share.hash);
    if (!(await checkPassword(password, share.passwordHash))) {
      req.onWrongPassword?.();
      throw unauthorized('wrong password');
    }
    await attempt.succeeded();
    return await shareAccessToken(grants, share);
  }

  /**
   * The item a request points at: the shared file itself, or for a folder share the entry
   * `subpath` names below the shared folder (confined to it, rules applied).
   */
  async select(
    opened: OpenedShare,
    subpath: string,
  ): Promise<{ access: FileAccess; item: Opened; own: boolean }> {
    if (!opened.folder) return { access: opened.ownerAccess, item: opened.target, own: false };
    const item = await opened.folder.open(canonicalise(subpath));
    if (!item.stat) {
      await item.close();
      throw notFound();
    }
    return { access: opened.folder, item, own: true };
  }

  /** The JSON answer of `GET /api/public/share` (contract 8.5). */
  async info(opened: OpenedShare, subpath: string): Promise<FileInfo> {
    const { access, item, own } = await this.select(opened, subpath);
    try {
      return await this.describe(opened, access, item);
    } finally {
      if (own) await item.close();
    }
  }

  private async describe(opened: OpenedShare, access: FileAccess, item: Opened): Promise<FileInfo> {
    const modify = may(opened.owner.perm, 'modify');
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
