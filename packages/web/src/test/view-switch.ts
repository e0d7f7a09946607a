import { act, fireEvent, screen, within } from '@testing-library/react';

/** Clicks the button named `name` (a view of the "Show as" switch, or any other). */
export function press(name: string): void {
  act(() => {
    fireEvent.click(screen.getByRole('button', { name }));
  });
}

/** The views of the "Show as" switch that are pressed now, by name. */
export function pressedViews(): (string | null)[] {
  return within(screen.getByRole('group', { name: 'Show as' }))
    .getAllByRole('button')
    .filter((button) => button.getAttribute('aria-pressed') === 'true')
    .map((button) => button.getAttribute('aria-label'));
}
