interface IconProps {
  name: string;
  className?: string;
}

/** A Material Icons glyph; decorative, so the accessible name comes from the surrounding control. */
export function Icon({ name, className }: IconProps) {
  return (
    <span className={className ? `material-icons ${className}` : 'material-icons'} aria-hidden="true">
      {name}
    </span>
  );
}
