import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { updateUser } from '../../../api/users';
import { Checkbox } from '../../../components/form/Checkbox';
import { NumberField } from '../../../components/form/NumberField';
import { usePageTitle } from '../../../hooks/use-page-title';
import { useUser } from '../../../hooks/use-user';
import { useAuthStore } from '../../../stores/auth';
import { showError, showSuccess } from '../../../stores/toasts';
import { LanguageSelect } from '../shared/LanguageSelect';
import { MAX_UPLOADS_LIMIT, MIN_UPLOADS_LIMIT } from '../shared/uploads-limit';
import { ApiTokensCard } from './ApiTokens';
import { ChangePasswordCard } from './ChangePasswordCard';

/** The fields a user may change about themselves from this screen. */
const PROFILE_FIELDS = [
  'locale',
  'hideDotfiles',
  'singleClick',
  'redirectAfterCopyMove',
  'dateFormat',
  'uploadsLimit',
];

export function ProfileSettings() {
  const { t } = useTranslation();
  const user = useUser();
  const renew = useAuthStore((state) => state.renew);
  usePageTitle(t('settings.profile.title'));

  const [hideDotfiles, setHideDotfiles] = useState(user.hideDotfiles);
  const [singleClick, setSingleClick] = useState(user.singleClick);
  const [redirectAfterCopyMove, setRedirectAfterCopyMove] = useState(user.redirectAfterCopyMove);
  const [dateFormat, setDateFormat] = useState(user.dateFormat);
  const [uploadsLimit, setUploadsLimit] = useState(user.uploadsLimit ?? MIN_UPLOADS_LIMIT);
  const [locale, setLocale] = useState(user.locale);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    if (busy) return;
    setBusy(true);
    try {
      await updateUser(
        { id: user.id, locale, hideDotfiles, singleClick, redirectAfterCopyMove, dateFormat, uploadsLimit },
        PROFILE_FIELDS,
      );
      // The session token carries the user: a fresh one brings the new settings (and language).
      await renew();
      showSuccess(t('settings.saved'));
    } catch (error) {
      showError(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="settings__cards">
      <form
        className="card"
        aria-labelledby="profile-title"
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <h2 id="profile-title" className="card__title">
          {t('settings.profile.title')}
        </h2>
        <div className="card__content">
          <Checkbox label={t('settings.hideDotfiles')} checked={hideDotfiles} onChange={setHideDotfiles} />
          <Checkbox label={t('settings.singleClick')} checked={singleClick} onChange={setSingleClick} />
          <Checkbox
            label={t('settings.redirectAfterCopyMove')}
            checked={redirectAfterCopyMove}
            onChange={setRedirectAfterCopyMove}
          />
          <Checkbox label={t('settings.dateFormat')} checked={dateFormat} onChange={setDateFormat} />
          <NumberField
            label={t('settings.uploadsLimit')}
            min={MIN_UPLOADS_LIMIT}
            max={MAX_UPLOADS_LIMIT}
            value={uploadsLimit}
            onChange={setUploadsLimit}
          />
          <LanguageSelect value={locale} onChange={setLocale} />
        </div>
        <div className="card__actions">
          <button type="submit" className="button" disabled={busy}>
            {t('buttons.update')}
          </button>
        </div>
      </form>
      <ChangePasswordCard />
      <ApiTokensCard />
    </div>
  );
}
