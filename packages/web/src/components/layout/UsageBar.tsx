import type { Usage } from '@filebrowser/contract';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { fetchUsage } from '../../api/resources';
import { useFilesStore } from '../../stores/files';
import { formatSize } from '../../utils/format-size';

/**
 * Disk usage of the folder on screen, or the user's quota and what their scope holds when the
 * server says a quota applies; stays hidden until (and unless) the server answers.
 */
export function UsageBar({ path }: { path: string }) {
  const { t, i18n } = useTranslation();
  const listingVersion = useFilesStore((state) => state.listingVersion);
  const [usage, setUsage] = useState<Usage | null>(null);

  useEffect(() => {
    let active = true;
    const controller = new AbortController();
    fetchUsage(path, controller.signal).then(
      (answer) => active && setUsage(answer),
      () => active && setUsage(null),
    );
    return () => {
      active = false;
      controller.abort();
    };
  }, [path, listingVersion]);

  if (!usage || usage.total <= 0) return null;
  const used = formatSize(usage.used, i18n.language);
  const total = formatSize(usage.total, i18n.language);
  const quota = usage.quota !== undefined;
  return (
    <div className="usage">
      <progress
        className="usage__bar"
        value={Math.min(usage.used, usage.total)}
        max={usage.total}
        aria-label={t(quota ? 'sidebar.quota' : 'sidebar.usage')}
      />
      <span className="usage__text">
        {t(quota ? 'sidebar.quotaText' : 'sidebar.usageText', { used, total })}
      </span>
    </div>
  );
}
