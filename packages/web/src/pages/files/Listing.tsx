import type { FileItem } from '@filebrowser/contract';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { Icon } from '../../components/Icon';
import { useUser } from '../../hooks/use-user';
import { formatAbsolute, formatModified } from '../../utils/format-date';
import { formatSize } from '../../utils/format-size';
import { filesRoute } from '../../utils/paths';
import { fileIcon } from './file-icon';
import { useIncrementalList } from './use-incremental-list';

function ListingRow({ item }: { item: FileItem }) {
  const { i18n } = useTranslation();
  const navigate = useNavigate();
  const user = useUser();
  const to = filesRoute(item.path, item.isDir);
  const modified = new Date(item.modified);
  return (
    <tr
      className="listing__row"
      onClick={(event) => {
        // The name is the real link; the rest of the row is a bigger target for pointers.
        if (!(event.target instanceof Element) || !event.target.closest('a')) void navigate(to);
      }}
    >
      <td className="listing__name">
        <Link to={to} className="listing__link">
          <Icon
            name={fileIcon(item)}
            className={item.isDir ? 'listing__icon listing__icon--dir' : 'listing__icon'}
          />
          <span className="listing__label">{item.name}</span>
        </Link>
      </td>
      <td className="listing__size">{item.isDir ? '—' : formatSize(item.size, i18n.language)}</td>
      <td className="listing__modified">
        <time
          dateTime={item.modified}
          title={Number.isNaN(modified.getTime()) ? undefined : formatAbsolute(modified, i18n.language)}
        >
          {formatModified(item.modified, user.dateFormat, i18n.language)}
        </time>
      </td>
    </tr>
  );
}

export function Listing({ items }: { items: FileItem[] }) {
  const { t } = useTranslation();
  const { visible, sentinel } = useIncrementalList(items);

  if (items.length === 0) {
    return (
      <div className="lonely">
        <Icon name="sentiment_dissatisfied" className="lonely__icon" />
        <p>{t('files.lonely')}</p>
      </div>
    );
  }

  return (
    <>
      <table className="listing">
        <thead>
          <tr>
            <th scope="col" className="listing__name">
              {t('files.name')}
            </th>
            <th scope="col" className="listing__size">
              {t('files.size')}
            </th>
            <th scope="col" className="listing__modified">
              {t('files.lastModified')}
            </th>
          </tr>
        </thead>
        <tbody>
          {visible.map((item) => (
            <ListingRow key={item.path} item={item} />
          ))}
        </tbody>
      </table>
      <div ref={sentinel} className="listing__sentinel" />
    </>
  );
}
