import {
  BRAND_COLOR_PATTERN,
  DEFAULT_MINIMUM_PASSWORD_LENGTH,
  MAX_MINIMUM_PASSWORD_LENGTH,
  AUDIT_DEFAULT_RETENTION_DAYS,
  AUDIT_MAX_RETENTION_DAYS,
  TRASH_MAX_RETENTION_DAYS,
  WEBDAV_MODES,
  type Settings,
  type WebDavMode,
} from '@filebrowser/contract';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { getSettings, updateSettings } from '../../../api/settings';
import { ErrorScreen } from '../../../components/ErrorScreen';
import { Checkbox } from '../../../components/form/Checkbox';
import { NumberField } from '../../../components/form/NumberField';
import { SelectField } from '../../../components/form/SelectField';
import { TextField } from '../../../components/form/TextField';
import { Spinner } from '../../../components/Spinner';
import { useLoad } from '../../../hooks/use-load';
import { usePageTitle } from '../../../hooks/use-page-title';
import { startup } from '../../../startup';
import { useThemeStore } from '../../../stores/theme';
import { showError, showSuccess } from '../../../stores/toasts';
import { ListTextField } from '../shared/ListTextField';
import { RulesEditor } from '../shared/RulesEditor';
import { UserSettingsFields } from '../shared/UserSettingsFields';
import { AuthMethodField } from './AuthMethodField';
import { BrandingFields } from './BrandingFields';
import { CommandRunnerFields } from './CommandRunnerFields';
import { useChunkSizeField } from './use-chunk-size-field';

const MAX_RETRY_COUNT = 65535;

function GlobalSettingsForm({ initial }: { initial: Settings }) {
  const { t } = useTranslation();
  const setTheme = useThemeStore((state) => state.setTheme);
  const [settings, setSettings] = useState(initial);
  const [busy, setBusy] = useState(false);
  const patch = (changes: Partial<Settings> | ((current: Settings) => Partial<Settings>)) =>
    setSettings((current) => ({
      ...current,
      ...(typeof changes === 'function' ? changes(current) : changes),
    }));
  const chunkSize = useChunkSizeField(initial.tus.chunkSize, (bytes) =>
    patch((current) => ({ tus: { ...current.tus, chunkSize: bytes } })),
  );

  // Checked only when changed: a colour an old database brought along is kept as it is.
  const colorInvalid =
    settings.branding.color !== initial.branding.color &&
    settings.branding.color !== '' &&
    !BRAND_COLOR_PATTERN.test(settings.branding.color);

  const submit = async () => {
    if (busy) return;
    if (colorInvalid) {
      showError(new Error(t('settings.branding.colorInvalid')));
      return;
    }
    setBusy(true);
    // A chunk size typed just before saving has not settled yet: read it now.
    const next: Settings = { ...settings, tus: { ...settings.tus, chunkSize: chunkSize.commit() } };
    setSettings(next);
    try {
      await updateSettings(next);
      setTheme(next.branding.theme);
      showSuccess(t('settings.saved'));
    } catch (error) {
      showError(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="settings__cards"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <section className="card" aria-labelledby="global-title">
        <h2 id="global-title" className="card__title">
          {t('settings.global.title')}
        </h2>
        <div className="card__content">
          <Checkbox
            label={t('settings.global.signup')}
            checked={settings.signup}
            onChange={(signup) => patch({ signup })}
          />
          <Checkbox
            label={t('settings.global.hideLoginButton')}
            checked={settings.hideLoginButton}
            onChange={(hideLoginButton) => patch({ hideLoginButton })}
          />
          <NumberField
            label={t('settings.global.minimumPasswordLength')}
            hint={t('settings.global.minimumPasswordLengthHint', { max: MAX_MINIMUM_PASSWORD_LENGTH })}
            min={1}
            max={MAX_MINIMUM_PASSWORD_LENGTH}
            value={settings.minimumPasswordLength || DEFAULT_MINIMUM_PASSWORD_LENGTH}
            onChange={(minimumPasswordLength) => patch({ minimumPasswordLength })}
          />
          <AuthMethodField method={settings.authMethod} />
          <Checkbox
            label={t('settings.global.createUserDir')}
            checked={settings.createUserDir}
            onChange={(createUserDir) => patch({ createUserDir })}
          />
          <SelectField
            label={t('settings.global.webdav')}
            value={settings.webdav ?? 'on'}
            options={WEBDAV_MODES.map((mode) => ({
              value: mode,
              label: t(`settings.global.webdavModes.${mode}`),
            }))}
            onChange={(webdav) => patch({ webdav: webdav as WebDavMode })}
          />
          <Checkbox
            label={t('settings.global.webdavPasswords')}
            checked={settings.webdavPasswords ?? true}
            onChange={(webdavPasswords) => patch({ webdavPasswords })}
          />
          <TextField
            label={t('settings.global.userHomeBasePath')}
            value={settings.userHomeBasePath}
            spellCheck={false}
            onChange={(userHomeBasePath) => patch({ userHomeBasePath })}
          />
          <RulesEditor rules={settings.rules} onChange={(rules) => patch({ rules })} />
          {startup.EnableExec && (
            <ListTextField
              label={t('settings.global.shell')}
              hint={t('settings.global.shellDangerHint')}
              separator="lines"
              value={settings.shell}
              onChange={(shell) => patch({ shell })}
            />
          )}
          <BrandingFields
            branding={settings.branding}
            colorInvalid={colorInvalid}
            onChange={(changes) => patch((current) => ({ branding: { ...current.branding, ...changes } }))}
          />
          <fieldset className="fieldset">
            <legend>{t('settings.tus.title')}</legend>
            <p className="field__hint">{t('settings.tus.description')}</p>
            <TextField
              label={t('settings.tus.chunkSize')}
              hint={t('settings.tus.chunkSizeHint')}
              value={chunkSize.text}
              spellCheck={false}
              onChange={chunkSize.setText}
            />
            <NumberField
              label={t('settings.tus.retryCount')}
              min={0}
              max={MAX_RETRY_COUNT}
              value={settings.tus.retryCount}
              onChange={(retryCount) => patch((current) => ({ tus: { ...current.tus, retryCount } }))}
            />
          </fieldset>
          <fieldset className="fieldset">
            <legend>{t('settings.trash.title')}</legend>
            <p className="field__hint">{t('settings.trash.description')}</p>
            <Checkbox
              label={t('settings.trash.enabled')}
              checked={settings.trash.enabled}
              onChange={(enabled) => patch((current) => ({ trash: { ...current.trash, enabled } }))}
            />
            <NumberField
              label={t('settings.trash.retentionDays')}
              hint={t('settings.trash.retentionDaysHint')}
              min={0}
              max={TRASH_MAX_RETENTION_DAYS}
              value={settings.trash.retentionDays}
              onChange={(retentionDays) =>
                patch((current) => ({ trash: { ...current.trash, retentionDays } }))
              }
            />
          </fieldset>
          <fieldset className="fieldset">
            <legend>{t('settings.audit.title')}</legend>
            <NumberField
              label={t('settings.audit.retentionDays')}
              hint={t('settings.audit.retentionDaysHint')}
              min={0}
              max={AUDIT_MAX_RETENTION_DAYS}
              value={settings.audit?.retentionDays ?? AUDIT_DEFAULT_RETENTION_DAYS}
              onChange={(retentionDays) => patch({ audit: { retentionDays } })}
            />
          </fieldset>
        </div>
      </section>

      <section className="card" aria-labelledby="defaults-title">
        <h2 id="defaults-title" className="card__title">
          {t('settings.defaults.title')}
        </h2>
        <div className="card__content">
          <p className="field__hint">{t('settings.defaults.description')}</p>
          <UserSettingsFields
            value={settings.defaults}
            onChange={(changes) => patch((current) => ({ defaults: { ...current.defaults, ...changes } }))}
          />
        </div>
      </section>

      {startup.EnableExec && (
        <section className="card" aria-labelledby="command-runner-title">
          <h2 id="command-runner-title" className="card__title">
            {t('settings.commandRunner.title')}
          </h2>
          <div className="card__content">
            <CommandRunnerFields value={settings} onChange={patch} />
          </div>
        </section>
      )}

      <div className="form-footer">
        <button type="submit" className="button" disabled={busy}>
          {t('buttons.save')}
        </button>
      </div>
    </form>
  );
}

export function GlobalSettings() {
  const { t } = useTranslation();
  usePageTitle(t('settings.global.title'));
  const { state } = useLoad(getSettings, 'settings');
  if (state.status === 'loading') return <Spinner />;
  if (state.status === 'error') return <ErrorScreen status={state.code} detail={state.message} />;
  return <GlobalSettingsForm initial={state.data} />;
}
