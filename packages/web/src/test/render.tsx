import { render, type RenderResult } from '@testing-library/react';
import type { ReactElement } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { initI18n } from '../i18n';

/** Renders a component the way the app does: in English, inside a router. */
export async function renderWithApp(
  ui: ReactElement,
  { route = '/' }: { route?: string } = {},
): Promise<RenderResult> {
  await initI18n('en');
  // A data router, as the app has, so components may block navigation.
  const router = createMemoryRouter([{ path: '*', element: ui }], { initialEntries: [route] });
  return render(<RouterProvider router={router} />);
}
