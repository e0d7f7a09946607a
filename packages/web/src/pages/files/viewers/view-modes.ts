import { isDelimitedName } from './delimited';
import { isMarkdownName } from './markdown';

/** How a text file is shown: its source in the editor, a table, rendered Markdown, or both. */
export type ViewMode = 'source' | 'table' | 'rendered' | 'split';

/** The modes a file offers, first the one it opens in; a single mode needs no switch. */
export function viewModesFor(name: string, readOnly: boolean): ViewMode[] {
  if (isDelimitedName(name)) return ['table', 'source'];
  // Who cannot edit came to read; who can edits best seeing both.
  if (isMarkdownName(name))
    return readOnly ? ['rendered', 'split', 'source'] : ['split', 'source', 'rendered'];
  return ['source'];
}

/** Whether a mode shows the editor. */
export function showsSource(mode: ViewMode): boolean {
  return mode === 'source' || mode === 'split';
}
