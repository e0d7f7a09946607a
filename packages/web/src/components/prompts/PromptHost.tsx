import { useEffect } from 'react';
import { selectCurrentPrompt, useLayoutStore, type PromptEntry } from '../../stores/layout';
import { ConfirmPrompt } from './ConfirmPrompt';
import { CreatePrompt } from './CreatePrompt';
import { HelpPrompt } from './HelpPrompt';
import { ReplacePrompt } from '../upload/ReplacePrompt';
import { UploadPrompt } from '../upload/UploadPrompt';

function renderPrompt(entry: PromptEntry, close: () => void) {
  switch (entry.name) {
    case 'sidebar':
      // The sidebar draws itself; the prompt only gives it the overlay and Escape.
      return null;
    case 'help':
      return <HelpPrompt props={entry.props} close={close} />;
    case 'newDir':
      return <CreatePrompt kind="folder" base={entry.props.base} close={close} />;
    case 'newFile':
      return <CreatePrompt kind="file" base={entry.props.base} close={close} />;
    case 'confirm':
      return <ConfirmPrompt props={entry.props} close={close} />;
    case 'upload':
      return <UploadPrompt props={entry.props} close={close} />;
    case 'replace':
      return <ReplacePrompt props={entry.props} close={close} />;
  }
}

/** Draws the prompt on screen (the oldest open one) over a dimmed page; Escape or the overlay closes it. */
export function PromptHost() {
  const current = useLayoutStore(selectCurrentPrompt);
  const closePrompt = useLayoutStore((state) => state.closePrompt);

  useEffect(() => {
    if (!current) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        closePrompt();
      }
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [current, closePrompt]);

  if (!current) return null;
  return (
    <>
      <div
        className={current.name === 'sidebar' ? 'overlay overlay--sidebar' : 'overlay'}
        onClick={closePrompt}
        aria-hidden="true"
      />
      {/* Keyed so that a following prompt starts with fresh state. */}
      <div key={current.id} className="prompt-layer">
        {renderPrompt(current, closePrompt)}
      </div>
    </>
  );
}
