import { AUDIT_ACTIONS, type AuditEntry } from '@filebrowser/contract';
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { auditExportURL, listAudit, type AuditFilters } from '../../../api/audit';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorScreen } from '../../../components/ErrorScreen';
import { SelectField } from '../../../components/form/SelectField';
import { TextField } from '../../../components/form/TextField';
import { Spinner } from '../../../components/Spinner';
import { useLoad } from '../../../hooks/use-load';
import { usePageTitle } from '../../../hooks/use-page-title';
import { triggerDownload } from '../../../utils/download';
import { formatAbsolute } from '../../../utils/format-date';

const PAGE_SIZE = 50;

interface FormState {
  user: string;
  action: string;
  path: string;
  /** `datetime-local` values, in the browser's time zone. */
  from: string;
  to: string;
}

const EMPTY_FORM: FormState = { user: '', action: '', path: '', from: '', to: '' };

function filtersOf(form: FormState): AuditFilters {
  const time = (value: string) => (value ? new Date(value).getTime() : undefined);
  const from = time(form.from);
  const to = time(form.to);
  return {
    user: form.user.trim(),
    action: form.action,
    path: form.path.trim(),
    ...(from !== undefined && !Number.isNaN(from) && { from }),
    ...(to !== undefined && !Number.isNaN(to) && { to }),
  };
}

/**
 * Settings → Audit (administrators): the audit log, newest first, filtered by user, action, path
 * and time, a page at a time, and exported as CSV or JSON with the same filters.
 */
export function AuditLog() {
  const { t, i18n } = useTranslation();
  usePageTitle(t('settings.audit.title'));
  const [form, setForm] = useState<FormState>(EMPTY_FORM);
  const [filters, setFilters] = useState<AuditFilters>(filtersOf(EMPTY_FORM));
  // Cursors of the pages shown so far: the last one is the current page's ('' is the newest).
  const [cursors, setCursors] = useState<string[]>(['']);
  const cursor = cursors[cursors.length - 1]!;
  const { state } = useLoad(() => listAudit(filters, cursor, PAGE_SIZE), JSON.stringify([filters, cursor]));

  const change = (key: keyof FormState) => (value: string) => setForm((f) => ({ ...f, [key]: value }));
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilters(filtersOf(form));
    setCursors(['']);
  };
  const clear = () => {
    setForm(EMPTY_FORM);
    setFilters(filtersOf(EMPTY_FORM));
    setCursors(['']);
  };

  const actionOptions = [
    { value: '', label: t('settings.audit.anyAction') },
    ...AUDIT_ACTIONS.map((a) => ({ value: a, label: a })),
  ];

  return (
    <section className="card card--wide" aria-labelledby="audit-title">
      <h2 id="audit-title" className="card__title">
        {t('settings.audit.title')}
      </h2>
      <div className="card__content">
        <p className="field__hint">{t('settings.audit.description')}</p>
        <form className="audit__filters" aria-label={t('settings.audit.title')} onSubmit={apply}>
          <TextField label={t('settings.audit.user')} value={form.user} onChange={change('user')} />
          <SelectField
            label={t('settings.audit.action')}
            value={form.action}
            options={actionOptions}
            onChange={change('action')}
          />
          <TextField
            label={t('settings.audit.path')}
            value={form.path}
            placeholder="/"
            spellCheck={false}
            onChange={change('path')}
          />
          <TextField
            label={t('settings.audit.from')}
            type="datetime-local"
            value={form.from}
            onChange={change('from')}
          />
          <TextField
            label={t('settings.audit.to')}
            type="datetime-local"
            value={form.to}
            onChange={change('to')}
          />
          <div className="audit__buttons">
            <button type="submit" className="button">
              {t('settings.audit.apply')}
            </button>
            <button type="button" className="button button--flat" onClick={clear}>
              {t('settings.audit.clear')}
            </button>
            <button
              type="button"
              className="button button--flat"
              onClick={() => triggerDownload(auditExportURL(filters, 'csv'))}
            >
              {t('settings.audit.exportCsv')}
            </button>
            <button
              type="button"
              className="button button--flat"
              onClick={() => triggerDownload(auditExportURL(filters, 'json'))}
            >
              {t('settings.audit.exportJson')}
            </button>
          </div>
        </form>
      </div>
      {state.status === 'loading' && <Spinner />}
      {state.status === 'error' && <ErrorScreen status={state.code} detail={state.message} />}
      {state.status === 'ready' &&
        (state.data.items.length === 0 ? (
          <EmptyState />
        ) : (
          <div className="table-wrap">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">{t('settings.audit.time')}</th>
                  <th scope="col">{t('settings.audit.user')}</th>
                  <th scope="col">{t('settings.audit.address')}</th>
                  <th scope="col">{t('settings.audit.action')}</th>
                  <th scope="col">{t('settings.audit.pathColumn')}</th>
                  <th scope="col">{t('settings.audit.result')}</th>
                  <th scope="col">{t('settings.audit.detail')}</th>
                </tr>
              </thead>
              <tbody>
                {state.data.items.map((entry) => (
                  <AuditRow key={entry.id} entry={entry} locale={i18n.language} />
                ))}
              </tbody>
            </table>
          </div>
        ))}
      <div className="card__actions">
        <button
          type="button"
          className="button button--flat"
          disabled={cursors.length === 1}
          onClick={() => setCursors((c) => c.slice(0, -1))}
        >
          {t('settings.audit.newer')}
        </button>
        <button
          type="button"
          className="button button--flat"
          disabled={state.status !== 'ready' || !state.data.next}
          onClick={() => state.status === 'ready' && setCursors((c) => [...c, state.data.next])}
        >
          {t('settings.audit.older')}
        </button>
      </div>
    </section>
  );
}

function AuditRow({ entry, locale }: { entry: AuditEntry; locale: string }) {
  const { t } = useTranslation();
  const time = new Date(entry.time);
  return (
    <tr>
      <td>
        <time dateTime={time.toISOString()}>{formatAbsolute(time, locale)}</time>
      </td>
      <td>{entry.user}</td>
      <td>{entry.address}</td>
      <td>{entry.action}</td>
      <td className="table__path">
        {entry.path}
        {entry.destination && ` → ${entry.destination}`}
      </td>
      <td>
        {entry.result === 'ok' ? t('settings.audit.ok') : t('settings.audit.error', { status: entry.status })}
      </td>
      <td>{entry.detail}</td>
    </tr>
  );
}
