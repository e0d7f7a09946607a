import { useEffect, useRef, type ChangeEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Icon } from '../Icon';
import { PromptCard } from '../prompts/PromptCard';
import type { PromptProps } from '../prompts/types';
import { entriesFromFiles } from './entries';
import { uploadEntries } from './start-upload';
import './upload.css';

/** Lets the user pick files, or a whole folder, to upload into the folder on screen. */
export function UploadPrompt({ props, close }: PromptProps<'upload'>) {
  const { t } = useTranslation();
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);

  // React has no prop for webkitdirectory, which turns the picker into a folder picker.
  useEffect(() => folderInput.current?.setAttribute('webkitdirectory', ''), []);

  const picked = (event: ChangeEvent<HTMLInputElement>) => {
    const files = Array.from(event.target.files ?? []);
    if (files.length === 0) return;
    close();
    void uploadEntries(entriesFromFiles(files), props.base, props.items);
  };

  return (
    <PromptCard
      title={t('upload.title')}
      actions={
        <button type="button" className="button button--flat" onClick={close}>
          {t('buttons.cancel')}
        </button>
      }
    >
      <p>{t('upload.message')}</p>
      <div className="upload-choices">
        <button type="button" className="upload-choice" onClick={() => fileInput.current?.click()} autoFocus>
          <Icon name="insert_drive_file" />
          <span>{t('upload.file')}</span>
        </button>
        <button type="button" className="upload-choice" onClick={() => folderInput.current?.click()}>
          <Icon name="folder" />
          <span>{t('upload.folder')}</span>
        </button>
      </div>
      <input ref={fileInput} type="file" multiple hidden onChange={picked} data-upload-input="files" />
      <input ref={folderInput} type="file" multiple hidden onChange={picked} data-upload-input="folder" />
    </PromptCard>
  );
}
