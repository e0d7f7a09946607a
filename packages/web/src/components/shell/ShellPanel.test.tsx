import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startup } from '../../startup';
import { useAuthStore } from '../../stores/auth';
import { useFilesStore } from '../../stores/files';
import { useShellStore } from '../../stores/shell';
import { tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { useFileActions } from '../../pages/files/file-actions';
import { ActionButton } from '../../pages/files/FilesHeader';
import { SHELL_DEFAULT_HEIGHT_EM } from './shell-height';
import { ShellPanel } from './ShellPanel';

/** Stands in for the browser's WebSocket: records what the panel sends and lets a test play the server. */
class FakeSocket extends EventTarget {
  static all: FakeSocket[] = [];
  readonly sent: string[] = [];
  closedWith: number | undefined;

  constructor(readonly url: string) {
    super();
    FakeSocket.all.push(this);
  }

  send(data: string) {
    this.sent.push(data);
  }

  close(code?: number) {
    this.closedWith = code ?? 1005;
  }

  open() {
    this.dispatchEvent(new Event('open'));
  }

  line(text: string) {
    this.dispatchEvent(new MessageEvent('message', { data: text }));
  }

  end(code: number, reason = '') {
    const event = new Event('close') as Event & { code: number; reason: string };
    Object.assign(event, { code, reason });
    this.dispatchEvent(event);
  }

  static last(): FakeSocket {
    const socket = FakeSocket.all.at(-1);
    if (!socket) throw new Error('no socket was opened');
    return socket;
  }
}

/** The file browser's shell action, as its action bar shows it (only to someone signed in). */
function ShellToggle() {
  return useAuthStore((state) => state.user) ? <ShellAction /> : null;
}

function ShellAction() {
  const shell = useFileActions().general.find((action) => action.id === 'shell');
  return shell ? <ActionButton action={shell} /> : null;
}

async function renderShell() {
  return renderWithApp(
    <>
      <ShellToggle />
      <ShellPanel />
    </>,
  );
}

const input = () => screen.getByRole('textbox', { name: 'Command' });

function type(text: string) {
  fireEvent.change(input(), { target: { value: text } });
  fireEvent.keyDown(input(), { key: 'Enter' });
}

/** Plays the server for the last command: opened, lines, then the close frame. */
async function serve(lines: string[], code = 1000, reason = '') {
  const socket = FakeSocket.last();
  await act(async () => {
    socket.open();
    for (const l of lines) socket.line(l);
    socket.end(code, reason);
  });
  return socket;
}

describe('ShellPanel', () => {
  const enableExec = startup.EnableExec;

  beforeEach(() => {
    FakeSocket.all = [];
    vi.stubGlobal('WebSocket', FakeSocket);
    startup.EnableExec = true;
    useAuthStore.setState({ user: tokenUser({ execute: true }), jwt: 'a.b.c' });
    useFilesStore.setState({ currentFolder: '/docs/' });
    useShellStore.setState({ open: true, history: [], entries: [], height: SHELL_DEFAULT_HEIGHT_EM });
  });

  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    startup.EnableExec = enableExec;
  });

  it('runs the line in the folder on screen and shows its output', async () => {
    await renderShell();
    type('ls -l');
    const socket = FakeSocket.last();
    expect(socket.url).toBe(`ws://${window.location.host}/api/command/docs/`);
    await serve(['a.txt', 'b.txt']);
    expect(socket.sent).toEqual(['ls -l']);
    expect(await screen.findByText(/a\.txt\s+b\.txt/)).toBeTruthy();
    expect(screen.getByText('ls -l')).toBeTruthy();
    expect(useShellStore.getState().history).toEqual(['ls -l']);
  });

  it('shows a failure with the reason the server gave, and a refusal as the server worded it', async () => {
    await renderShell();
    type('cat nope');
    await serve(['cat: nope: No such file or directory'], 1011, 'exit status 1');
    expect(await screen.findByText('The command failed: exit status 1')).toBeTruthy();

    type('rm x');
    await serve(['Command not allowed.'], 1008);
    expect(screen.getByText('Command not allowed.')).toBeTruthy();
    expect(screen.getAllByText(/The command failed/)).toHaveLength(1);
  });

  it('says when the connection closes before the command finished', async () => {
    await renderShell();
    type('echo hi');
    await serve([], 1006);
    expect(screen.getByText('The connection to the server closed before the command finished.')).toBeTruthy();
  });

  it('walks the history with the arrow keys', async () => {
    await renderShell();
    type('echo one');
    await serve(['one']);
    type('echo two');
    await serve(['two']);
    fireEvent.change(input(), { target: { value: 'ec' } });
    fireEvent.keyDown(input(), { key: 'ArrowUp' });
    expect((input() as HTMLInputElement).value).toBe('echo two');
    fireEvent.keyDown(input(), { key: 'ArrowUp' });
    expect((input() as HTMLInputElement).value).toBe('echo one');
    fireEvent.keyDown(input(), { key: 'ArrowDown' });
    fireEvent.keyDown(input(), { key: 'ArrowDown' });
    expect((input() as HTMLInputElement).value).toBe('ec');
  });

  it('answers clear and exit itself, without a request', async () => {
    await renderShell();
    type('echo one');
    await serve(['one']);
    expect(screen.getByText('one')).toBeTruthy();
    type('clear');
    expect(screen.queryByText('one')).toBeNull();
    expect(FakeSocket.all).toHaveLength(1);
    type('exit');
    expect(screen.queryByRole('region', { name: 'Shell' })).toBeNull();
    expect(useShellStore.getState().open).toBe(false);
    expect(FakeSocket.all).toHaveLength(1);
    expect(useShellStore.getState().history).toEqual(['echo one']);
  });

  it('runs one command at a time; Ctrl+C stops it and closes the socket', async () => {
    await renderShell();
    type('sleep 30');
    const socket = FakeSocket.last();
    act(() => socket.open());
    type('echo queued');
    expect(FakeSocket.all).toHaveLength(1);
    fireEvent.keyDown(input(), { key: 'c', ctrlKey: true });
    expect(socket.closedWith).toBe(1000);
    expect(await screen.findByText('Stopped.')).toBeTruthy();
  });

  it('stops a running command when the panel closes', async () => {
    await renderShell();
    type('sleep 30');
    const socket = FakeSocket.last();
    act(() => socket.open());
    fireEvent.click(screen.getByRole('button', { name: 'Shell' }));
    expect(screen.queryByRole('region', { name: 'Shell' })).toBeNull();
    expect(socket.closedWith).toBe(1000);
  });

  it('opens at 25em and resizes from the keyboard within its limits', async () => {
    await renderShell();
    const divider = screen.getByRole('separator', { name: 'Resize the shell' });
    expect(divider.getAttribute('aria-valuenow')).toBe('25');
    fireEvent.keyDown(divider, { key: 'ArrowUp' });
    expect(useShellStore.getState().height).toBe(26);
    expect(screen.getByRole('region', { name: 'Shell' }).style.height).toBe('26em');
  });
});

describe('the shell action and ShellPanel availability', () => {
  const enableExec = startup.EnableExec;
  beforeEach(() => useShellStore.setState({ open: true }));
  afterEach(() => {
    cleanup();
    startup.EnableExec = enableExec;
  });

  it.each([
    ['exec is disabled on the server', false, tokenUser({ execute: true })],
    ['the user lacks the execute permission', true, tokenUser({ create: true })],
    ['nobody is signed in', true, null],
  ])('shows nothing when %s', async (_case, enabled, user) => {
    startup.EnableExec = enabled;
    useAuthStore.setState({ user, jwt: user ? 'a.b.c' : null });
    await renderShell();
    expect(screen.queryByRole('button', { name: 'Shell' })).toBeNull();
    expect(screen.queryByRole('region', { name: 'Shell' })).toBeNull();
  });

  it('toggles the panel for a user with execute when exec is enabled', async () => {
    startup.EnableExec = true;
    useAuthStore.setState({ user: tokenUser({ execute: true }), jwt: 'a.b.c' });
    useShellStore.setState({ open: false });
    await renderShell();
    const toggle = screen.getByRole('button', { name: 'Shell' });
    expect(toggle.getAttribute('aria-pressed')).toBe('false');
    fireEvent.click(toggle);
    expect(screen.getByRole('region', { name: 'Shell' })).toBeTruthy();
    expect(screen.getByRole('textbox', { name: 'Command' })).toBe(document.activeElement);
  });
});
