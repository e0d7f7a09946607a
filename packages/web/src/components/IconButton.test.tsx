import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { IconButton } from './IconButton';

describe('IconButton', () => {
  afterEach(cleanup);

  it('is a plain button named by its label, its glyph hidden from assistive technology', () => {
    let clicks = 0;
    render(<IconButton icon="delete" label="Delete /a.txt" onClick={() => clicks++} />);
    const button = screen.getByRole('button', { name: 'Delete /a.txt' });
    expect(button.getAttribute('type')).toBe('button');
    expect(button.className).toBe('icon-button');
    expect(button.textContent).toBe('delete');
    expect(button.querySelector('.material-icons')?.getAttribute('aria-hidden')).toBe('true');
    act(() => {
      fireEvent.click(button);
    });
    expect(clicks).toBe(1);
  });

  it('keeps its class beside a caller’s and passes other attributes on', () => {
    render(<IconButton icon="close" label="Close" className="toast__close" title="Close" disabled />);
    const button = screen.getByRole('button', { name: 'Close' }) as HTMLButtonElement;
    expect(button.className).toBe('icon-button toast__close');
    expect(button.title).toBe('Close');
    expect(button.disabled).toBe(true);
  });
});
