import { lazy, Suspense } from 'react';
import { selectCurrentPrompt, useLayoutStore, type PromptEntry } from '../../stores/layout';
import { SearchPrompt } from '../search/SearchPrompt';
import { ConfirmPrompt } from './ConfirmPrompt';
import { CreatePrompt } from './CreatePrompt';
import { DownloadPrompt } from './DownloadPrompt';
import { DiscardEditorChangesPrompt } from './DiscardEditorChangesPrompt';
import { HelpPrompt } from './HelpPrompt';
import { SharePrompt } from './SharePrompt';

// The file browser's prompts travel with the file browser's code, not with the app shell.
const FilePrompt = lazy(() =>
  import('../../pages/files/prompts/FilePrompt').then((m) => ({ default: m.FilePrompt })),
);
import { ReplacePrompt } from '../upload/ReplacePrompt';
import { UploadPrompt } from '../upload/UploadPrompt';
import { useWindowKeyDown } from '../../hooks/use-window-key-down';

function renderPrompt(entry: PromptEntry, close: () => void) {
  switch (entry.name) {
    case 'sidebar':
    case 'more':
      // The sidebar and the header's 'more' menu draw themselves; the prompt gives them the
      // overlay and Escape.
      return null;
    case 'help':
      return <HelpPrompt props={entry.props} close={close} />;
    case 'newDir':
      return <CreatePrompt kind="folder" base={entry.props.base} close={close} />;
    case 'newFile':
      return <CreatePrompt kind="file" base={entry.props.base} close={close} />;
    case 'confirm':
      return <ConfirmPrompt props={entry.props} close={close} />;
    case 'rename':
    case 'delete':
    case 'move':
    case 'copy':
    case 'info':
    case 'replace-rename':
      return (
        <Suspense fallback={null}>
          <FilePrompt entry={entry} close={close} />
        </Suspense>
      );
    case 'share':
      return <SharePrompt props={entry.props} close={close} />;
    case 'download':
      return <DownloadPrompt props={entry.props} close={close} />;
    case 'search':
      return <SearchPrompt props={entry.props} close={close} />;
    case 'discardEditorChanges':
      return <DiscardEditorChangesPrompt props={entry.props} close={close} />;
    case 'upload':
      return <UploadPrompt props={entry.props} close={close} />;
    case 'replace':
      return <ReplacePrompt props={entry.props} close={close} />;
  }
}

const OVERLAY_CLASS: Partial<Record<PromptEntry['name'], string>> = {
  sidebar: 'overlay overlay--sidebar',
  more: 'overlay overlay--clear',
};

/** Draws the prompt on screen (the oldest open one) over a dimmed page; Escape or the overlay closes it. */
export function PromptHost() {
  const current = useLayoutStore(selectCurrentPrompt);
  const closePrompt = useLayoutStore((state) => state.closePrompt);
  const dismissPrompt = useLayoutStore((state) => state.dismissPrompt);

  useWindowKeyDown((event) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    closePrompt();
  }, current !== undefined);

  if (!current) return null;
  // A prompt closes itself, not whichever prompt is on screen when its work ends.
  const close = () => dismissPrompt(current.id);
  return (
    <>
      <div className={OVERLAY_CLASS[current.name] ?? 'overlay'} onClick={close} aria-hidden="true" />
      {/* Keyed so that a following prompt starts with fresh state. */}
      <div key={current.id} className="prompt-layer">
        {renderPrompt(current, close)}
      </div>
    </>
  );
}
