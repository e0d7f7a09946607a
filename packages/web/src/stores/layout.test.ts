import { beforeEach, describe, expect, it, vi } from 'vitest';
import { selectCurrentPrompt, useLayoutStore } from './layout';

describe('prompt stack', () => {
  beforeEach(() => useLayoutStore.setState({ prompts: [] }));

  it('shows the oldest open prompt', () => {
    const { openPrompt } = useLayoutStore.getState();
    openPrompt('newDir', { base: '/' });
    openPrompt('help', {});
    expect(selectCurrentPrompt(useLayoutStore.getState())?.name).toBe('newDir');
    expect(useLayoutStore.getState().prompts.map((prompt) => prompt.name)).toEqual(['newDir', 'help']);
  });

  it('closes the oldest prompt and runs its close callback', () => {
    const first = vi.fn();
    const second = vi.fn();
    const { openPrompt, closePrompt } = useLayoutStore.getState();
    openPrompt('help', {}, first);
    openPrompt('newFile', { base: '/docs/' }, second);

    closePrompt();
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).not.toHaveBeenCalled();
    expect(selectCurrentPrompt(useLayoutStore.getState())?.name).toBe('newFile');

    closePrompt();
    expect(second).toHaveBeenCalledTimes(1);
    expect(useLayoutStore.getState().prompts).toEqual([]);
  });

  it('does nothing when closing with no prompt open', () => {
    expect(() => useLayoutStore.getState().closePrompt()).not.toThrow();
  });

  it('drops every prompt on navigation without running callbacks', () => {
    const callback = vi.fn();
    const { openPrompt, closeAllPrompts } = useLayoutStore.getState();
    openPrompt('help', {}, callback);
    openPrompt('sidebar', {});
    closeAllPrompts();
    expect(useLayoutStore.getState().prompts).toEqual([]);
    expect(callback).not.toHaveBeenCalled();
  });

  it('gives each prompt its own id', () => {
    const { openPrompt } = useLayoutStore.getState();
    const a = openPrompt('help', {});
    const b = openPrompt('help', {});
    expect(a).not.toBe(b);
  });

  it('closes one given prompt wherever it is in the stack, running its callback', () => {
    const first = vi.fn();
    const second = vi.fn();
    const { openPrompt, dismissPrompt } = useLayoutStore.getState();
    const a = openPrompt('help', {}, first);
    openPrompt('newDir', { base: '/' }, second);
    dismissPrompt(a);
    expect(first).toHaveBeenCalledTimes(1);
    expect(useLayoutStore.getState().prompts.map((prompt) => prompt.name)).toEqual(['newDir']);
    // A prompt that already went does not take the next one with it.
    dismissPrompt(a);
    expect(useLayoutStore.getState().prompts.map((prompt) => prompt.name)).toEqual(['newDir']);
    expect(second).not.toHaveBeenCalled();
  });
});
