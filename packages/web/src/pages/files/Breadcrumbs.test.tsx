import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { renderWithApp } from '../../test/render';
import { Breadcrumbs } from './Breadcrumbs';

describe('Breadcrumbs', () => {
  afterEach(cleanup);

  it('links every segment and marks the current folder', async () => {
    await renderWithApp(<Breadcrumbs path="/a b/c/" isDir />);
    const nav = screen.getByRole('navigation', { name: 'Breadcrumbs' });
    const links = within(nav).getAllByRole<HTMLAnchorElement>('link');
    expect(links.map((link) => link.getAttribute('href'))).toEqual([
      '/files/',
      '/files/a%20b/',
      '/files/a%20b/c/',
    ]);
    expect(links[2]?.getAttribute('aria-current')).toBe('page');
  });

  it('shows three trailing segments after "..."', async () => {
    await renderWithApp(<Breadcrumbs path="/1/2/3/4/5/" isDir />);
    const nav = screen.getByRole('navigation', { name: 'Breadcrumbs' });
    const names = within(nav)
      .getAllByRole('link')
      .slice(1)
      .map((link) => link.textContent?.replace(/chevron_right/g, '').trim());
    expect(names).toEqual(['...', '3', '4', '5']);
    expect(within(nav).getByRole('link', { name: '...' }).getAttribute('href')).toBe('/files/1/2/');
  });
});
