/**
 * What tells one file-system object from another that later takes its name: an inode number is
 * given again once freed, its birth time (where the file system keeps one) is not. A rename keeps
 * it; a copy (a move across file systems) makes a new one. Read it with nanoseconds
 * (`{ bigint: true }`): birth times a millisecond apart must not compare equal.
 */
export function identity(st: { dev: bigint; ino: bigint; birthtimeNs: bigint }): string {
  return `${st.dev}:${st.ino}:${st.birthtimeNs}`;
}

/** The device an identity was read on: only a move across file systems changes it. */
export function deviceOf(id: string): string {
  return id.slice(0, id.indexOf(':'));
}
