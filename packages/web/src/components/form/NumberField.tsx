import { useState } from 'react';
import { TextField } from './TextField';

interface NumberFieldProps {
  label: string;
  value: number;
  onChange: (value: number) => void;
  min?: number;
  max?: number;
  hint?: string;
}

/**
 * A whole number kept within bounds. The text is kept as typed while editing (so that clearing
 * the field to type another number works) and tidied up when the field loses focus.
 */
export function NumberField({
  label,
  value,
  onChange,
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
  hint,
}: NumberFieldProps) {
  const [text, setText] = useState(String(value));
  const [shown, setShown] = useState(value);
  if (shown !== value) {
    setShown(value);
    setText(String(value));
  }

  const clamp = (n: number) => Math.min(max, Math.max(min, Math.round(n)));
  return (
    <TextField
      label={label}
      type="number"
      inputMode="numeric"
      min={min === Number.MIN_SAFE_INTEGER ? undefined : min}
      max={max === Number.MAX_SAFE_INTEGER ? undefined : max}
      step={1}
      hint={hint}
      value={text}
      onChange={(raw) => {
        setText(raw);
        const n = Number(raw);
        if (raw.trim() !== '' && Number.isFinite(n)) {
          const next = clamp(n);
          setShown(next);
          onChange(next);
        }
      }}
      onBlur={() => setText(String(value))}
    />
  );
}
