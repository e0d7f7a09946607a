import { cleanup, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { renderWithApp } from '../test/render';
import { ErrorScreen } from './ErrorScreen';

describe('ErrorScreen', () => {
  afterEach(cleanup);

  it.each([
    [0, 'cloud_off', "The server can't be reached."],
    [403, 'lock', "You don't have permissions to access this."],
    [404, 'gps_off', "This location can't be reached."],
    [500, 'error_outline', 'Something really went wrong.'],
    [502, 'error_outline', 'Something really went wrong.'],
  ])('shows status %i with its icon and message', async (status, icon, message) => {
    const { container } = await renderWithApp(<ErrorScreen status={status} />);
    expect(screen.getByRole('heading').textContent).toBe(message);
    expect(container.textContent).toContain(icon);
  });

  it("adds the server's words when they say more than the status line", async () => {
    await renderWithApp(<ErrorScreen status={500} detail="500 Internal Server Error" />);
    expect(document.querySelector('.error-screen__detail')).toBeNull();
    cleanup();
    await renderWithApp(<ErrorScreen status={403} detail="403 Forbidden (outside your scope)" />);
    expect(screen.getByText('403 Forbidden (outside your scope)')).toBeTruthy();
  });
});
