import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { renderMarkdown } from './markdown';

/** A Markdown file rendered: the HTML comes only from renderMarkdown, which sanitises it. */
export function MarkdownView({ text, path, name }: { text: string; path: string; name: string }) {
  const { t } = useTranslation();
  const html = useMemo(() => renderMarkdown(text, path), [text, path]);
  return (
    <article
      className="markdown"
      tabIndex={0}
      aria-label={t('viewer.rendered', { name })}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
