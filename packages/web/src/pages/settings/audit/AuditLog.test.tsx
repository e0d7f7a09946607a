import type { AuditEntry, AuditPage } from '@filebrowser/contract';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithApp } from '../../../test/render';
import { AuditLog } from './AuditLog';

const entry = (id: number, over: Partial<AuditEntry> = {}): AuditEntry => ({
  id,
  time: Date.UTC(2026, 0, 2, 3, 4),
  user: 'alice',
  userID: 2,
  address: '192.0.2.1',
  action: 'file.rename',
  path: `/a${id}.txt`,
  destination: `/b${id}.txt`,
  result: 'ok',
  status: 200,
  detail: '',
  ...over,
});

describe('AuditLog', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const anchorClicks = vi.fn<(href: string) => void>();
  const pages = new Map<string, AuditPage>();

  beforeEach(() => {
    pages.clear();
    fetchMock.mockImplementation(async (input) => {
      const url = new URL(String(input), 'http://localhost');
      return Response.json(pages.get(url.searchParams.get('cursor') ?? '') ?? { items: [], next: '' });
    });
    vi.stubGlobal('fetch', fetchMock);
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      anchorClicks(this.getAttribute('href') ?? '');
    });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    fetchMock.mockReset();
    anchorClicks.mockReset();
  });

  const requested = () => fetchMock.mock.calls.map(([input]) => new URL(String(input), 'http://localhost'));

  it('lists records with their paths and results, and pages older and back', async () => {
    pages.set('', {
      items: [entry(9), entry(8, { result: 'error', status: 403, action: 'file.delete', destination: '' })],
      next: '8',
    });
    pages.set('8', { items: [entry(7, { user: 'bob' })], next: '' });
    await renderWithApp(<AuditLog />);
    const rows = await screen.findAllByRole('row');
    expect(rows).toHaveLength(3);
    const cells = (row: HTMLElement) =>
      within(row)
        .getAllByRole('cell')
        .map((c) => c.textContent);
    expect(cells(rows[1]!).slice(1)).toEqual([
      'alice',
      '192.0.2.1',
      'file.rename',
      '/a9.txt → /b9.txt',
      'OK',
      '',
    ]);
    expect(cells(rows[2]!).slice(3, 6)).toEqual(['file.delete', '/a8.txt', 'Error 403']);
    expect(document.title).toBe('Audit log - File Browser');

    expect(screen.getByRole('button', { name: 'Newer' })).toHaveProperty('disabled', true);
    fireEvent.click(screen.getByRole('button', { name: 'Older' }));
    expect(await screen.findByText('bob')).toBeTruthy();
    expect(requested().at(-1)!.searchParams.get('cursor')).toBe('8');
    expect(screen.getByRole('button', { name: 'Older' })).toHaveProperty('disabled', true);
    fireEvent.click(screen.getByRole('button', { name: 'Newer' }));
    expect(await screen.findByText('/a9.txt → /b9.txt')).toBeTruthy();
  });

  it('sends the filters, from the first page, and exports with the same filters', async () => {
    pages.set('', { items: [entry(1)], next: '' });
    await renderWithApp(<AuditLog />);
    await screen.findAllByRole('row');
    fireEvent.change(screen.getByLabelText('User'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByLabelText('Action'), { target: { value: 'file.delete' } });
    fireEvent.change(screen.getByLabelText('Path (and below)'), { target: { value: '/docs' } });
    fireEvent.change(screen.getByLabelText('From'), { target: { value: '2026-01-02T00:00' } });
    fireEvent.click(screen.getByRole('button', { name: 'Apply' }));
    await waitFor(() => expect(requested().at(-1)!.searchParams.get('user')).toBe('alice'));
    const query = requested().at(-1)!.searchParams;
    expect(query.get('action')).toBe('file.delete');
    expect(query.get('path')).toBe('/docs');
    expect(query.get('from')).toBe(String(new Date('2026-01-02T00:00').getTime()));
    expect(query.has('to')).toBe(false);
    expect(query.has('cursor')).toBe(false);

    fireEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    fireEvent.click(screen.getByRole('button', { name: 'Export JSON' }));
    const [csv, json] = anchorClicks.mock.calls.map(([href]) => new URL(href, 'http://localhost'));
    expect(csv!.pathname).toBe('/api/audit/export');
    expect(csv!.searchParams.get('format')).toBe('csv');
    expect(csv!.searchParams.get('user')).toBe('alice');
    expect(csv!.searchParams.get('action')).toBe('file.delete');
    expect(json!.searchParams.get('format')).toBe('json');
    expect(json!.searchParams.get('path')).toBe('/docs');
  });

  it('shows the error screen when the log cannot be read', async () => {
    fetchMock.mockResolvedValue(new Response('403 Forbidden\n', { status: 403 }));
    await renderWithApp(<AuditLog />);
    expect(await screen.findByText("You don't have permissions to access this.")).toBeTruthy();
  });
});
