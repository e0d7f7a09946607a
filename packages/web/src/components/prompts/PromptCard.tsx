import { useId, type ReactNode } from 'react';

interface PromptCardProps {
  title: string;
  children?: ReactNode;
  /** The buttons at the bottom of the card. */
  actions: ReactNode;
  /** When given, the card is a form and Enter submits it. */
  onSubmit?: () => void;
}

/** The modal card every prompt is drawn in. */
export function PromptCard({ title, children, actions, onSubmit }: PromptCardProps) {
  const titleId = useId();
  const body = (
    <>
      <h2 id={titleId} className="card__title">
        {title}
      </h2>
      {children && <div className="card__content">{children}</div>}
      <div className="card__actions">{actions}</div>
    </>
  );
  return (
    <div className="card prompt" role="dialog" aria-modal="true" aria-labelledby={titleId}>
      {onSubmit ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            onSubmit();
          }}
        >
          {body}
        </form>
      ) : (
        body
      )}
    </div>
  );
}
