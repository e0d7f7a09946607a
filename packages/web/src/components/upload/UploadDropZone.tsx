import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../Icon';
import type { ExistingItem } from './clashes';
import { useUploadDrop } from './use-upload-drop';
import './upload.css';

interface UploadDropZoneProps {
  /** The folder a drop uploads into; null turns dropping off. */
  base: string | null;
  items?: readonly ExistingItem[];
  className?: string;
  children: ReactNode;
}

/** A wrapper that takes files and folders dropped from the desktop and uploads them into `base`. */
export function UploadDropZone({ base, items, className, children }: UploadDropZoneProps) {
  const { t } = useTranslation();
  const { dragging, handlers } = useUploadDrop({ base, ...(items && { items }) });
  const classes = ['upload-drop', dragging && 'upload-drop--active', className].filter(Boolean).join(' ');
  return (
    <div className={classes} {...handlers}>
      {children}
      {dragging && (
        <div className="upload-drop__hint" aria-hidden="true">
          <Icon name="file_upload" />
          <span>{t('upload.dropHere')}</span>
        </div>
      )}
    </div>
  );
}
