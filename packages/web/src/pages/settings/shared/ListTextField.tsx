import { useState } from 'react';
import { TextAreaField } from '../../../components/form/TextAreaField';
import { TextField } from '../../../components/form/TextField';
import { splitLines, splitWords } from './list-text';

interface ListTextFieldProps {
  label: string;
  value: string[];
  onChange: (value: string[]) => void;
  /** "words": one line, items separated by spaces; "lines": a text area with one item per line. */
  separator: 'words' | 'lines';
  hint?: string;
}

/**
 * A list edited as text. The text is kept as typed, so that the separator being typed (a space, a
 * new line) is not swallowed by turning it into a list and back on every keystroke.
 */
export function ListTextField({ label, value, onChange, separator, hint }: ListTextFieldProps) {
  const joiner = separator === 'words' ? ' ' : '\n';
  const [text, setText] = useState(() => value.join(joiner));
  const update = (next: string) => {
    setText(next);
    onChange(separator === 'words' ? splitWords(next) : splitLines(next));
  };
  return separator === 'words' ? (
    <TextField label={label} value={text} onChange={update} hint={hint} spellCheck={false} />
  ) : (
    <TextAreaField label={label} value={text} onChange={update} hint={hint} />
  );
}
