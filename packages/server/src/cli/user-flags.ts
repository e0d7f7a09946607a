import {
  PERMISSION_NAMES,
  SORT_FIELDS,
  VIEW_MODES,
  type Permissions,
  type UserDefaults,
  type UserInput,
} from '@filebrowser/contract';
import type { OptionSpec, OptionValues } from '../config/options.js';

/**
 * Flags describing a user (`users add|update`) or the defaults new users get (`config init|set`).
 * Names are File Browser's: --perm.admin, --sorting.by, --viewMode, ...
 */
export const USER_OPTIONS: OptionSpec[] = [
  ...PERMISSION_NAMES.map((p): OptionSpec => ({
    name: `perm.${p}`,
    kind: 'boolean',
    description: `${p} permission${p === 'admin' ? ' (grants every other one)' : ''}`,
  })),
  { name: 'scope', kind: 'string', description: 'folder the user is confined to, relative to the root' },
  { name: 'locale', kind: 'string', description: 'interface language (e.g. en, de, pt-br)' },
  { name: 'viewMode', kind: 'string', choices: VIEW_MODES, description: 'list, mosaic or "mosaic gallery"' },
  { name: 'singleClick', kind: 'boolean', description: 'open files and folders with one click' },
  { name: 'redirectAfterCopyMove', kind: 'boolean', description: 'go to the destination after copy or move' },
  {
    name: 'sorting.by',
    kind: 'string',
    choices: SORT_FIELDS,
    description: 'sort listings by name, size or modified',
  },
  { name: 'sorting.asc', kind: 'boolean', description: 'sort in ascending order' },
  { name: 'commands', kind: 'list', description: 'commands the user may run (comma-separated)' },
  { name: 'lockPassword', kind: 'boolean', description: 'the user may not change their password' },
  { name: 'hideDotfiles', kind: 'boolean', description: 'hide files whose name starts with a dot' },
  { name: 'dateFormat', kind: 'boolean', description: 'show exact dates instead of relative ones' },
  { name: 'aceEditorTheme', kind: 'string', description: 'theme of the text editor' },
  {
    name: 'quota',
    kind: 'uint',
    description: 'bytes the user’s scope may hold, trash included (0: no quota)',
  },
];

export interface UserChanges {
  data: UserInput;
  /** Field names the flags set, as PUT /api/users/{id} lists them in `which`. */
  fields: string[];
}

/** Turns the given user flags into a partial user. Only flags that were typed appear. */
export function userChangesFromFlags(values: OptionValues, base: Permissions): UserChanges {
  const data: Record<string, unknown> = {};
  const fields = new Set<string>();
  const perm: Partial<Permissions> = {};
  for (const [name, value] of Object.entries(values)) {
    if (name.startsWith('perm.')) {
      perm[name.slice(5) as keyof Permissions] = value as boolean;
      fields.add('perm');
    } else if (name === 'sorting.by' || name === 'sorting.asc') {
      fields.add('sorting');
    } else if (name === 'commands') {
      data.commands = (value as string[]).flatMap((c) => c.split(/\s+/)).filter(Boolean);
      fields.add('commands');
    } else if (USER_OPTIONS.some((s) => s.name === name)) {
      data[name] = value;
      fields.add(name);
    }
  }
  if (fields.has('perm')) data.perm = { ...base, ...perm };
  return { data: data as UserInput, fields: [...fields] };
}

/** Applies sorting flags on top of the current sorting (both sorting flags are optional). */
export function sortingFromFlags(values: OptionValues, current: { by: string; asc: boolean }) {
  return {
    by: (values['sorting.by'] as string | undefined) ?? current.by,
    asc: (values['sorting.asc'] as boolean | undefined) ?? current.asc,
  };
}

/** The defaults new users get, changed by the given flags (config init|set). */
export function applyUserDefaults(defaults: UserDefaults, values: OptionValues): UserDefaults {
  const { data, fields } = userChangesFromFlags(values, defaults.perm);
  const next: UserDefaults = { ...defaults, ...pick(data, fields) };
  if (fields.includes('sorting')) next.sorting = sortingFromFlags(values, defaults.sorting);
  return next;
}

function pick(data: UserInput, fields: string[]): Partial<UserDefaults> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (f === 'lockPassword' || f === 'sorting') continue; // not a default / handled by the caller
    const v = (data as Record<string, unknown>)[f];
    if (v !== undefined) out[f] = v;
  }
  return out as Partial<UserDefaults>;
}
