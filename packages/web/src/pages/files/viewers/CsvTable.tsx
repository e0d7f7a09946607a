import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Checkbox } from '../../../components/form/Checkbox';
import { detectSeparator, fallbackSeparator, parseDelimited, SEPARATORS, type Separator } from './delimited';

const ROW_HEIGHT = 33;
const SEPARATOR_KEYS: Record<Separator, 'comma' | 'semicolon' | 'tab' | 'pipe'> = {
  ',': 'comma',
  ';': 'semicolon',
  '\t': 'tab',
  '|': 'pipe',
};

/**
 * A CSV or TSV file as a table. Only the rows in view are in the page, so a file of a hundred
 * thousand lines scrolls as freely as one of ten. The separator is guessed from the text and can
 * be corrected; the first row is a header unless unticked.
 */
export function CsvTable({ text, name }: { text: string; name: string }) {
  const { t } = useTranslation();
  const detected = useMemo(() => detectSeparator(text, fallbackSeparator(name)), [text, name]);
  const [chosen, setChosen] = useState<Separator | null>(null);
  const separator = chosen ?? detected;
  const records = useMemo(() => parseDelimited(text, separator), [text, separator]);
  const [hasHeader, setHasHeader] = useState(true);
  const header = hasHeader ? records[0] : undefined;
  const body = hasHeader ? records.slice(1) : records;
  const columns = records.reduce((most, record) => Math.max(most, record.length), 0);
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: body.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtualizer.getVirtualItems();
  const before = items[0]?.start ?? 0;
  const after = virtualizer.getTotalSize() - (items.at(-1)?.end ?? 0);
  const cells = (record: string[]) => Array.from({ length: columns }, (_, column) => record[column] ?? '');
  // Header and row numbers count in aria-rowindex, which starts at 1.
  const firstBodyIndex = header ? 2 : 1;

  return (
    <div className="csv">
      <div className="csv__options">
        <Checkbox label={t('viewer.headerRow')} checked={hasHeader} onChange={setHasHeader} />
        <label className="csv__separator">
          <span>{t('viewer.separator')}</span>
          <select value={separator} onChange={(event) => setChosen(event.target.value as Separator)}>
            {SEPARATORS.map((option) => (
              <option key={option} value={option}>
                {t(`viewer.separators.${SEPARATOR_KEYS[option]}`)}
              </option>
            ))}
          </select>
        </label>
        <span className="csv__count" role="status">
          {t('viewer.rows', { count: body.length })}
        </span>
      </div>
      {records.length === 0 ? (
        <p className="csv__empty">{t('viewer.noRows')}</p>
      ) : (
        <div
          ref={scroller}
          className="csv__scroll"
          // Focusable so the keyboard can scroll it.
          tabIndex={0}
          role="region"
          aria-label={t('viewer.table', { name })}
        >
          <table className="csv__table" aria-rowcount={body.length + (header ? 1 : 0)}>
            {header && (
              <thead>
                <tr aria-rowindex={1}>
                  <th className="csv__number" aria-hidden="true" />
                  {cells(header).map((cell, column) => (
                    <th key={column} scope="col" title={cell}>
                      {cell}
                    </th>
                  ))}
                </tr>
              </thead>
            )}
            <tbody>
              {before > 0 && <tr className="csv__spacer" aria-hidden="true" style={{ height: before }} />}
              {items.map((item) => (
                <tr key={item.key} aria-rowindex={item.index + firstBodyIndex}>
                  <th className="csv__number" scope="row">
                    {item.index + 1}
                  </th>
                  {cells(body[item.index] ?? []).map((cell, column) => (
                    <td key={column} title={cell}>
                      {cell}
                    </td>
                  ))}
                </tr>
              ))}
              {after > 0 && <tr className="csv__spacer" aria-hidden="true" style={{ height: after }} />}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
