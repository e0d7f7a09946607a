import type { User } from '@filebrowser/contract';
import type { StoredUser } from '../../store/users.js';

/** The wire form of a user: never the password hash; the scope only for admins. */
export function presentUser(u: StoredUser, forAdmin: boolean): User {
  return {
    id: u.id,
    username: u.username,
    password: '',
    scope: forAdmin ? u.scope : '',
    locale: u.locale,
    lockPassword: u.lockPassword,
    viewMode: u.viewMode,
    singleClick: u.singleClick,
    redirectAfterCopyMove: u.redirectAfterCopyMove,
    perm: u.perm,
    commands: u.commands,
    sorting: u.sorting,
    rules: u.rules,
    hideDotfiles: u.hideDotfiles,
    dateFormat: u.dateFormat,
    aceEditorTheme: u.aceEditorTheme,
    uploadsLimit: u.uploadsLimit,
    webdav: u.webdav ?? false,
    quota: u.quota,
  };
}
