import { AUTH_METHODS, type AuthMethod } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { TextField } from '../../../components/form/TextField';

/**
 * The way users log in, shown but not editable: the server takes it only from its command line
 * (switching it from a page could lock every user out, or let anyone in).
 */
export function AuthMethodField({ method }: { method: string }) {
  const { t } = useTranslation();
  const known = (AUTH_METHODS as readonly string[]).includes(method);
  return (
    <TextField
      label={t('settings.global.authMethod')}
      hint={t('settings.global.authMethodHint')}
      value={known ? t(`settings.global.authMethods.${method as AuthMethod}`) : method}
      readOnly
      onChange={() => undefined}
    />
  );
}
