import { render, type RenderResult } from '@testing-library/react';
import type { ReactElement } from 'react';
import { MemoryRouter } from 'react-router';
import { initI18n } from '../i18n';

/** Renders a component the way the app does: in English, inside a router. */
export async function renderWithApp(
  ui: ReactElement,
  { route = '/' }: { route?: string } = {},
): Promise<RenderResult> {
  await initI18n('en');
  return render(<MemoryRouter initialEntries={[route]}>{ui}</MemoryRouter>);
}
