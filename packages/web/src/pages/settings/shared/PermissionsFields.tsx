import type { Permissions } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { Checkbox } from '../../../components/form/Checkbox';
import { startup } from '../../../startup';

const GRANTED_BY_ADMIN: Permissions = {
  admin: true,
  execute: true,
  create: true,
  rename: true,
  modify: true,
  delete: true,
  share: true,
  download: true,
};

/** Admin implies every permission: ticking it ticks and locks the rest. */
export function withAdmin(perm: Permissions, admin: boolean): Permissions {
  return admin ? { ...GRANTED_BY_ADMIN } : { ...perm, admin: false };
}

export function PermissionsFields({
  perm,
  onChange,
}: {
  perm: Permissions;
  onChange: (perm: Permissions) => void;
}) {
  const { t } = useTranslation();
  const flags = ['create', 'rename', 'modify', 'delete', 'share', 'download', 'execute'] as const;
  return (
    <fieldset className="fieldset">
      <legend>{t('settings.permissions.title')}</legend>
      <p className="field__hint">{t('settings.permissions.description')}</p>
      <Checkbox
        label={t('settings.permissions.admin')}
        checked={perm.admin}
        onChange={(checked) => onChange(withAdmin(perm, checked))}
      />
      {flags
        .filter((flag) => flag !== 'execute' || startup.EnableExec)
        .map((flag) => (
          <Checkbox
            key={flag}
            label={t(`settings.permissions.${flag}`)}
            checked={perm[flag]}
            disabled={perm.admin}
            onChange={(checked) => onChange({ ...perm, [flag]: checked })}
          />
        ))}
    </fieldset>
  );
}
