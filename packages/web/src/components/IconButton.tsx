import type { ButtonHTMLAttributes } from 'react';
import { Icon } from './Icon';

interface IconButtonProps extends Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'children' | 'type'> {
  /** The Material Icons glyph shown. */
  icon: string;
  /** The button's accessible name: the glyph alone says nothing to a screen reader. */
  label: string;
}

/** A button showing only a glyph, named by `label` (a row's actions in the settings tables). */
export function IconButton({ icon, label, className, ...rest }: IconButtonProps) {
  return (
    <button
      type="button"
      className={className ? `icon-button ${className}` : 'icon-button'}
      aria-label={label}
      {...rest}
    >
      <Icon name={icon} />
    </button>
  );
}
