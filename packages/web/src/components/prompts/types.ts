import type { PromptPayloads, PromptName } from '../../stores/layout';

export interface PromptProps<K extends PromptName> {
  props: PromptPayloads[K];
  /** Closes this prompt (running its close callback). */
  close: () => void;
}
