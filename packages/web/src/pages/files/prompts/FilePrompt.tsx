import type { PromptEntry } from '../../../stores/layout';
import { DeletePrompt } from './DeletePrompt';
import { InfoPrompt } from './InfoPrompt';
import { RenamePrompt } from './RenamePrompt';
import { ReplaceRenamePrompt } from './ReplaceRenamePrompt';
import { TransferPrompt } from './TransferPrompt';

export const FILE_PROMPTS = ['rename', 'delete', 'move', 'copy', 'info', 'replace-rename'] as const;
export type FilePromptName = (typeof FILE_PROMPTS)[number];
export type FilePromptEntry = Extract<PromptEntry, { name: FilePromptName }>;

/** The file browser's prompts; loaded with the file browser, not with the app shell. */
export function FilePrompt({ entry, close }: { entry: FilePromptEntry; close: () => void }) {
  switch (entry.name) {
    case 'rename':
      return <RenamePrompt props={entry.props} close={close} />;
    case 'delete':
      return <DeletePrompt props={entry.props} close={close} />;
    case 'move':
      return <TransferPrompt kind="move" props={entry.props} close={close} />;
    case 'copy':
      return <TransferPrompt kind="copy" props={entry.props} close={close} />;
    case 'info':
      return <InfoPrompt props={entry.props} close={close} />;
    case 'replace-rename':
      return <ReplaceRenamePrompt props={entry.props} close={close} />;
  }
}
