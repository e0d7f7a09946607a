import type { Share, ShareUnit } from '@filebrowser/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText } from '../../api/client';
import {
  absoluteURL,
  createShare,
  deleteShare,
  publicDownloadURL,
  shareLink,
  sharesOfPath,
} from '../../api/shares';
import { useCopyLink } from '../../hooks/use-copy-link';
import { showError } from '../../stores/toasts';
import { formatAbsolute } from '../../utils/format-date';
import { SelectField } from '../form/SelectField';
import { TextField } from '../form/TextField';
import { Icon } from '../Icon';
import { Spinner } from '../Spinner';
import { PromptCard } from './PromptCard';
import {
  checkDuration,
  DEFAULT_SHARE_UNIT,
  expiryLabel,
  MAX_SHARE_DURATION,
  newShareRequest,
  SHARE_UNITS,
  sortShareLinks,
} from './share-links';
import type { PromptProps } from './types';

type View = { name: 'loading' } | { name: 'list' } | { name: 'form' } | { name: 'confirm'; link: Share };

/** The file name at the end of a virtual path. */
function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * The share prompt: the caller's links to one path (a folder path ends with "/"), a form for a new
 * one, and deleting with a confirmation.
 */
export function SharePrompt({ props, close }: PromptProps<'share'>) {
  const { t, i18n } = useTranslation();
  const copyLink = useCopyLink();
  const isFile = !props.path.endsWith('/');
  const [links, setLinks] = useState<Share[]>([]);
  const [view, setView] = useState<View>({ name: 'loading' });
  const [loadError, setLoadError] = useState<string | null>(null);
  const [duration, setDuration] = useState('');
  const [unit, setUnit] = useState<ShareUnit>(DEFAULT_SHARE_UNIT);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let active = true;
    sharesOfPath(props.path).then(
      (found) => {
        if (!active) return;
        setLinks(sortShareLinks(found));
        setView(found.length > 0 ? { name: 'list' } : { name: 'form' });
      },
      (error: unknown) => active && setLoadError(errorText(error)),
    );
    return () => {
      active = false;
    };
  }, [props.path]);

  const durationValid = checkDuration(duration).ok;

  const submit = async () => {
    const request = newShareRequest(duration, unit, password);
    if (!request || busy) return;
    setBusy(true);
    try {
      const created = await createShare(props.path, request);
      setLinks((current) => sortShareLinks([...current, created]));
      setDuration('');
      setUnit(DEFAULT_SHARE_UNIT);
      setPassword('');
      setView({ name: 'list' });
    } catch (error) {
      showError(error);
    } finally {
      setBusy(false);
    }
  };

  const remove = async (link: Share) => {
    if (busy) return;
    setBusy(true);
    try {
      await deleteShare(link.hash);
      const rest = links.filter((l) => l.hash !== link.hash);
      setLinks(rest);
      setView(rest.length > 0 ? { name: 'list' } : { name: 'form' });
    } catch (error) {
      showError(error);
    } finally {
      setBusy(false);
    }
  };

  const title = t('share.title');

  if (loadError !== null) {
    return (
      <PromptCard
        title={title}
        actions={
          <button type="button" className="button button--flat" onClick={close} autoFocus>
            {t('buttons.close')}
          </button>
        }
      >
        <p role="alert">{loadError}</p>
      </PromptCard>
    );
  }

  if (view.name === 'loading') {
    return (
      <PromptCard title={title} actions={null}>
        <Spinner />
      </PromptCard>
    );
  }

  if (view.name === 'confirm') {
    return (
      <PromptCard
        title={t('share.deleteTitle')}
        onSubmit={() => void remove(view.link)}
        actions={
          <>
            <button
              type="button"
              className="button button--flat"
              onClick={() => setView({ name: 'list' })}
              autoFocus
            >
              {t('buttons.cancel')}
            </button>
            <button type="submit" className="button button--flat button--danger" disabled={busy}>
              {t('buttons.delete')}
            </button>
          </>
        }
      >
        <p>{t('share.deleteMessage')}</p>
      </PromptCard>
    );
  }

  if (view.name === 'form') {
    return (
      <PromptCard
        title={title}
        onSubmit={() => void submit()}
        actions={
          <>
            <button
              type="button"
              className="button button--flat"
              // With no link to go back to, cancelling the form closes the prompt.
              onClick={() => (links.length > 0 ? setView({ name: 'list' }) : close())}
            >
              {t('buttons.cancel')}
            </button>
            <button
              type="submit"
              className="button button--flat button--primary"
              disabled={busy || !durationValid}
            >
              {t('share.create')}
            </button>
          </>
        }
      >
        <p>{t('share.formHint')}</p>
        <div className="share-form__duration">
          <TextField
            label={t('share.duration')}
            type="number"
            inputMode="numeric"
            min={0}
            max={MAX_SHARE_DURATION}
            step={1}
            value={duration}
            onChange={setDuration}
            inputClassName={durationValid ? undefined : 'input--invalid'}
            aria-invalid={!durationValid}
            autoFocus
          />
          <SelectField
            label={t('share.unit')}
            value={unit}
            options={SHARE_UNITS.map((u) => ({ value: u, label: t(`share.units.${u}`) }))}
            onChange={(value) => setUnit(value as ShareUnit)}
          />
        </div>
        <TextField
          label={t('share.password')}
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={setPassword}
          hint={t('share.passwordHint')}
        />
      </PromptCard>
    );
  }

  return (
    <PromptCard
      title={title}
      actions={
        <>
          <button type="button" className="button button--flat" onClick={close}>
            {t('buttons.close')}
          </button>
          <button
            type="button"
            className="button button--flat button--primary"
            onClick={() => setView({ name: 'form' })}
            autoFocus
          >
            {t('buttons.new')}
          </button>
        </>
      }
    >
      <ul className="share-links" aria-label={t('share.links')}>
        {links.map((link) => {
          const url = shareLink(link.hash);
          return (
            <li key={link.hash} className="share-links__item">
              <div className="share-links__text">
                <a href={url} target="_blank" rel="noreferrer" className="share-links__hash">
                  {link.hash}
                </a>
                <span className="share-links__expiry">
                  {link.hasPassword && (
                    <span title={t('share.protected')}>
                      <Icon name="lock" />
                      <span className="sr-only">{t('share.protected')}</span>
                    </span>
                  )}
                  {link.expire === 0 ? (
                    t('share.permanent')
                  ) : (
                    <time
                      dateTime={new Date(link.expire * 1000).toISOString()}
                      title={formatAbsolute(new Date(link.expire * 1000), i18n.language)}
                    >
                      {expiryLabel(link, t('share.permanent'), i18n.language)}
                    </time>
                  )}
                </span>
              </div>
              <button
                type="button"
                className="icon-button"
                aria-label={t('share.copyLink', { hash: link.hash })}
                title={t('share.copyLink', { hash: link.hash })}
                onClick={() => void copyLink(url)}
              >
                <Icon name="content_paste" />
              </button>
              {isFile && (
                <button
                  type="button"
                  className="icon-button"
                  aria-label={t('share.copyDownloadLink', { hash: link.hash })}
                  title={t('share.copyDownloadLink', { hash: link.hash })}
                  onClick={() =>
                    void copyLink(absoluteURL(publicDownloadURL(link.hash, `/${baseName(props.path)}`)))
                  }
                >
                  <Icon name="content_paste_go" />
                </button>
              )}
              <button
                type="button"
                className="icon-button"
                aria-label={t('share.deleteLink', { hash: link.hash })}
                title={t('share.deleteLink', { hash: link.hash })}
                onClick={() => setView({ name: 'confirm', link })}
              >
                <Icon name="delete" />
              </button>
            </li>
          );
        })}
      </ul>
    </PromptCard>
  );
}
