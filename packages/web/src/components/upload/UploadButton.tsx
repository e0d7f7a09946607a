import { useTranslation } from 'react-i18next';
import { useAuthStore } from '../../stores/auth';
import { useFilesStore } from '../../stores/files';
import { useLayoutStore } from '../../stores/layout';
import { Icon } from '../Icon';
import type { ExistingItem } from './clashes';

interface UploadButtonProps {
  /** The folder uploads go to; by default the folder the file browser shows. */
  base?: string | null;
  /** That folder's entries, when the caller has them (spares a request for the clash check). */
  items?: readonly ExistingItem[];
  className?: string;
}

/** Opens the upload prompt; drawn only for users who may create files, where there is a folder. */
export function UploadButton({ base, items, className = 'icon-button' }: UploadButtonProps) {
  const { t } = useTranslation();
  const canCreate = useAuthStore((state) => !!state.user?.perm.create);
  const currentFolder = useFilesStore((state) => state.currentFolder);
  const openPrompt = useLayoutStore((state) => state.openPrompt);
  const folder = base === undefined ? currentFolder : base;
  if (!canCreate || !folder) return null;
  return (
    <button
      type="button"
      className={className}
      aria-label={t('upload.button')}
      title={t('upload.button')}
      onClick={() => openPrompt('upload', { base: folder, ...(items && { items }) })}
    >
      <Icon name="file_upload" />
    </button>
  );
}
