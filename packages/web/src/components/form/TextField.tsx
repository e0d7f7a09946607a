import { useId, type InputHTMLAttributes } from 'react';

interface TextFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'onChange' | 'value' | 'id'> {
  label: string;
  value: string | number;
  onChange: (value: string) => void;
  /** A line under the field; also its accessible description. */
  hint?: string;
  /** Extra class on the input, e.g. to colour it valid or invalid. */
  inputClassName?: string;
}

export function TextField({
  label,
  value,
  onChange,
  hint,
  inputClassName,
  type = 'text',
  ...rest
}: TextFieldProps) {
  const id = useId();
  const hintId = useId();
  return (
    <div className="field">
      <label className="field__label" htmlFor={id}>
        {label}
      </label>
      <input
        {...rest}
        id={id}
        type={type}
        className={inputClassName ? `input input--block ${inputClassName}` : 'input input--block'}
        value={value}
        aria-describedby={hint ? hintId : undefined}
        onChange={(event) => onChange(event.target.value)}
      />
      {hint && (
        <p id={hintId} className="field__hint">
          {hint}
        </p>
      )}
    </div>
  );
}
