import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useAuthStore } from '../../stores/auth';
import { FIRST_POLL_MS, JOB_POLL_MS, jobPercent, useJobsStore, type FollowedJob } from '../../stores/jobs';
import { formatSize } from '../../utils/format-size';
import { Icon } from '../Icon';
import '../progress-panel.css';
import './jobs.css';

const TITLE_KEYS = { copy: 'jobs.copying', rename: 'jobs.moving', archive: 'jobs.downloading' } as const;
const ICONS = { copy: 'content_copy', rename: 'forward', archive: 'file_download' } as const;

function JobRow({ followed }: { followed: FollowedJob }) {
  const { t, i18n } = useTranslation();
  const cancel = useJobsStore((state) => state.cancel);
  const { job, label, action } = followed;
  const title = t(TITLE_KEYS[action], { name: label });
  const percent = jobPercent(job);
  const locale = i18n.language;
  return (
    <li className="jobs-panel__job">
      <Icon name={ICONS[action]} className="jobs-panel__icon" />
      <span className="jobs-panel__title" title={title}>
        {title}
      </span>
      <button
        type="button"
        className="icon-button"
        aria-label={t('jobs.cancel', { name: label })}
        title={t('jobs.cancel', { name: label })}
        disabled={followed.cancelling}
        onClick={() => void cancel(followed.id)}
      >
        <Icon name="close" />
      </button>
      {/* Without a value the bar is indeterminate: the totals are still being counted. */}
      <progress
        className="progress-panel__bar jobs-panel__bar"
        max={100}
        value={percent}
        aria-label={title}
      />
      <span className="jobs-panel__stats">
        {followed.cancelling
          ? t('jobs.cancelling')
          : job && job.bytesTotal > 0
            ? `${percent ?? 0}% · ${formatSize(job.bytesDone, locale)} / ${formatSize(job.bytesTotal, locale)}`
            : job && job.itemsTotal > 0
              ? t('jobs.items', { done: job.itemsDone, total: job.itemsTotal })
              : t('jobs.starting')}
      </span>
    </li>
  );
}

/**
 * Copies, moves and archive downloads under way, each with its progress and a cancel button. It
 * floats beside the page, so the listing stays usable while the server works.
 */
export function JobsPanel() {
  const { t } = useTranslation();
  const jobs = useJobsStore((state) => state.jobs);
  const refresh = useJobsStore((state) => state.refresh);
  const adopt = useJobsStore((state) => state.adopt);
  const signedIn = useAuthStore((state) => state.user !== null);
  const following = jobs.length > 0;
  // A reloaded page picks up the work it had started.
  useEffect(() => {
    if (signedIn) void adopt();
  }, [signedIn, adopt]);
  useEffect(() => {
    if (!following) return;
    // Soon at first (most copies are small and end at once), then once a second.
    let delay = FIRST_POLL_MS;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const next = () => {
      timer = setTimeout(() => {
        void refresh().then(() => {
          delay = Math.min(delay * 2, JOB_POLL_MS);
          if (!stopped) next();
        });
      }, delay);
    };
    next();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [following, refresh]);
  if (!following) return null;
  return (
    <section className="progress-panel jobs-panel" aria-label={t('jobs.panel')}>
      <ul className="jobs-panel__list" aria-live="polite">
        {jobs.map((followed) => (
          <JobRow key={followed.id} followed={followed} />
        ))}
      </ul>
    </section>
  );
}
