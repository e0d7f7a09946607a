import { useTranslation } from 'react-i18next';
import { useLayoutStore } from '../../stores/layout';
import {
  selectPercent,
  selectRemainingCount,
  selectUploading,
  useUploadStore,
  type UploadTask,
} from '../../stores/upload';
import { formatSize } from '../../utils/format-size';
import { formatEta, formatSpeed } from '../../utils/upload-speed';
import { Icon } from '../Icon';
import '../progress-panel.css';
import './upload.css';

function TaskRow({ task, loaded }: { task: UploadTask; loaded: number }) {
  const percent = task.isDir || task.size === 0 ? 100 : Math.floor((loaded / task.size) * 100);
  return (
    <li className="upload-panel__file">
      <Icon name={task.isDir ? 'folder' : 'insert_drive_file'} className="upload-panel__file-icon" />
      <span className="upload-panel__file-name" title={task.name}>
        {task.name}
      </span>
      <progress
        className="progress-panel__bar upload-panel__file-bar"
        max={100}
        value={percent}
        aria-label={task.name}
      />
    </li>
  );
}

/**
 * The uploads under way: a thin bar along the top of the page and a panel with the file count,
 * speed, time left, bytes and a bar per file being sent; abort (after a question) and collapse.
 */
export function UploadPanel() {
  const { t, i18n } = useTranslation();
  const uploading = useUploadStore(selectUploading);
  const remaining = useUploadStore(selectRemainingCount);
  const percent = useUploadStore(selectPercent);
  const { tasks, active, loaded, totalBytes, loadedBytes, speed, eta, collapsed, toggleCollapsed, abort } =
    useUploadStore();
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  if (!uploading) return null;

  const locale = i18n.language;
  const confirmAbort = () =>
    openPrompt('confirm', {
      title: t('upload.abortTitle'),
      message: t('upload.abortConfirm'),
      confirmLabel: t('upload.abort'),
      onConfirm: abort,
    });

  return (
    <>
      <div
        className="upload-bar"
        role="progressbar"
        aria-label={t('upload.progress')}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
      >
        <div className="upload-bar__fill" style={{ width: `${percent}%` }} />
      </div>
      <section
        className={
          collapsed ? 'progress-panel upload-panel upload-panel--collapsed' : 'progress-panel upload-panel'
        }
        aria-label={t('upload.panel')}
      >
        <div className="upload-panel__header">
          <Icon name="cloud_upload" className="upload-panel__icon" />
          <h2 className="upload-panel__title" aria-live="polite">
            {t('upload.uploadingFiles', { count: remaining })}
          </h2>
          <button
            type="button"
            className="icon-button"
            aria-label={t('upload.abortLabel')}
            title={t('upload.abortLabel')}
            onClick={confirmAbort}
          >
            <Icon name="close" />
          </button>
          <button
            type="button"
            className="icon-button"
            aria-label={collapsed ? t('upload.expand') : t('upload.collapse')}
            title={collapsed ? t('upload.expand') : t('upload.collapse')}
            aria-expanded={!collapsed}
            onClick={toggleCollapsed}
          >
            <Icon name={collapsed ? 'expand_less' : 'expand_more'} />
          </button>
        </div>
        <dl className="upload-panel__stats">
          <div>
            <dt className="sr-only">{t('upload.progress')}</dt>
            <dd className="upload-panel__percent">{percent}%</dd>
          </div>
          <div>
            <dt className="sr-only">{t('upload.uploaded')}</dt>
            <dd>
              {t('upload.bytes', {
                loaded: formatSize(loadedBytes, locale),
                total: formatSize(totalBytes, locale),
              })}
            </dd>
          </div>
          <div>
            <dt className="sr-only">{t('upload.speedLabel')}</dt>
            <dd>{t('upload.speed', { speed: formatSpeed(speed, locale) })}</dd>
          </div>
          <div title={t('upload.timeLeft')}>
            <dt className="sr-only">{t('upload.timeLeft')}</dt>
            <dd className="upload-panel__eta">
              <Icon name="schedule" />
              <span>{formatEta(eta)}</span>
            </dd>
          </div>
        </dl>
        {!collapsed && (
          <ul className="upload-panel__files">
            {active.map((id) => {
              const task = tasks[id];
              return task ? <TaskRow key={id} task={task} loaded={loaded[id] ?? 0} /> : null;
            })}
          </ul>
        )}
      </section>
    </>
  );
}
