import {
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  type KeyboardEvent as ReactKeyboardEvent,
  type PointerEvent as ReactPointerEvent,
} from 'react';
import { useTranslation } from 'react-i18next';
import { runCommand, type CommandEnd, type CommandRun } from '../../api/command';
import { useFilesStore } from '../../stores/files';
import { useShellStore, type ShellEntry } from '../../stores/shell';
import { Icon } from '../Icon';
import {
  SHELL_DRAG_THROTTLE_MS,
  SHELL_MIN_HEIGHT_EM,
  heightAtPointer,
  shellHeightLimits,
  throttle,
  type ShellMetrics,
} from './shell-height';
import { freshCursor, historyDown, historyUp } from './shell-history';
import { SHELL_PANEL_ID, useShellAvailable } from './use-shell-available';

/** Words the panel answers itself instead of sending them to the server. */
const CLEAR = 'clear';
const EXIT = 'exit';

/** Output lines are put on screen at most this often: a command may print thousands at once. */
const OUTPUT_FLUSH_MS = 50;

/** Height step of the divider's arrow keys, in em. */
const KEYBOARD_STEP_EM = 1;

/** Collects lines and hands them over in batches. */
function lineBatcher(deliver: (lines: string[]) => void) {
  let lines: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (lines.length === 0) return;
    const batch = lines;
    lines = [];
    deliver(batch);
  };
  return {
    push: (line: string) => {
      lines.push(line);
      timer ??= setTimeout(flush, OUTPUT_FLUSH_MS);
    },
    flush,
  };
}

/** What one em and the divider measure now, and the window height. */
function measureShell(panel: HTMLElement | null, divider: HTMLElement | null): ShellMetrics {
  return {
    windowHeight: window.innerHeight,
    fontSize: (panel && parseFloat(getComputedStyle(panel).fontSize)) || 16,
    dividerHeight: divider?.offsetHeight ?? 0,
  };
}

function EndNotice({ end, hasOutput }: { end: CommandEnd; hasOutput: boolean }) {
  const { t } = useTranslation();
  let text: string | undefined;
  switch (end.kind) {
    case 'success':
      return null;
    case 'refused':
      // The server's reason is the last output line.
      text = hasOutput ? undefined : t('shell.refused');
      break;
    case 'failed':
      text = end.reason ? t('shell.failedWith', { reason: end.reason }) : t('shell.failed');
      break;
    case 'too-long':
      text = t('shell.tooLong');
      break;
    case 'stopped':
      text = t('shell.stopped');
      break;
    case 'disconnected':
      text = t('shell.disconnected');
      break;
  }
  return text ? <p className="shell__status">{text}</p> : null;
}

function Entry({ entry }: { entry: ShellEntry }) {
  return (
    <div className="shell__entry">
      <div className="shell__command">
        <Icon name="chevron_right" className="shell__prompt-icon" />
        <span className="shell__folder">{entry.folder}</span>
        <span className="shell__typed">{entry.command}</span>
      </div>
      {entry.output.length > 0 && <pre className="shell__output">{entry.output.join('\n')}</pre>}
      {entry.end && <EndNotice end={entry.end} hasOutput={entry.output.length > 0} />}
    </div>
  );
}

function OpenShellPanel() {
  const { t } = useTranslation();
  const folder = useFilesStore((state) => state.currentFolder) ?? '/';
  const invalidateListing = useFilesStore((state) => state.invalidateListing);
  const height = useShellStore((state) => state.height);
  const history = useShellStore((state) => state.history);
  const entries = useShellStore((state) => state.entries);
  const setOpen = useShellStore((state) => state.setOpen);
  const setHeight = useShellStore((state) => state.setHeight);
  const startEntry = useShellStore((state) => state.startEntry);
  const appendOutput = useShellStore((state) => state.appendOutput);
  const finishEntry = useShellStore((state) => state.finishEntry);
  const clear = useShellStore((state) => state.clear);

  const [text, setText] = useState('');
  const [cursor, setCursor] = useState(() => freshCursor(history));
  const [running, setRunning] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [limits, setLimits] = useState({ min: SHELL_MIN_HEIGHT_EM, max: Infinity });
  const runRef = useRef<CommandRun | null>(null);
  const endDragRef = useRef<(() => void) | null>(null);
  const panelRef = useRef<HTMLElement>(null);
  const dividerRef = useRef<HTMLDivElement>(null);
  const contentRef = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);

  const metrics = (): ShellMetrics => measureShell(panelRef.current, dividerRef.current);

  // Closing the panel or leaving the page stops the command: the server kills its processes.
  useEffect(
    () => () => {
      runRef.current?.stop();
      endDragRef.current?.();
    },
    [],
  );

  useEffect(() => inputRef.current?.focus(), []);

  // The limits depend on the window height and the panel's font size: measured, and again on resize.
  useLayoutEffect(() => {
    const measure = () => setLimits(shellHeightLimits(metrics()));
    measure();
    window.addEventListener('resize', measure);
    return () => window.removeEventListener('resize', measure);
  }, []);

  // The newest output stays in view.
  useLayoutEffect(() => {
    const content = contentRef.current;
    if (content) content.scrollTop = content.scrollHeight;
  }, [entries]);

  const submit = () => {
    if (running) return;
    const command = text.trim();
    setText('');
    if (!command) return;
    if (command === CLEAR) {
      clear();
      setCursor(freshCursor(history));
      return;
    }
    if (command === EXIT) {
      setOpen(false);
      return;
    }
    const id = startEntry(folder, command);
    setCursor(freshCursor(useShellStore.getState().history));
    const batch = lineBatcher((lines) => appendOutput(id, lines));
    setRunning(true);
    runRef.current = runCommand(folder, command, {
      onLine: batch.push,
      onEnd: (end) => {
        batch.flush();
        finishEntry(id, end);
        runRef.current = null;
        setRunning(false);
        // The command may have changed files in the folder on screen.
        invalidateListing();
        inputRef.current?.focus();
      },
    });
  };

  const onInputKeyDown = (event: ReactKeyboardEvent<HTMLInputElement>) => {
    // Typing here is for the shell, not for the file browser's shortcuts (Delete, Ctrl+A…).
    event.stopPropagation();
    const input = event.currentTarget;
    if (event.key === 'Enter') {
      event.preventDefault();
      submit();
    } else if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
      if (running) return;
      event.preventDefault();
      const move = event.key === 'ArrowUp' ? historyUp(history, cursor, text) : historyDown(history, cursor);
      if (!move) return;
      setCursor(move.cursor);
      setText(move.text);
    } else if (
      running &&
      (event.ctrlKey || event.metaKey) &&
      event.key.toLowerCase() === 'c' &&
      input.selectionStart === input.selectionEnd
    ) {
      event.preventDefault();
      runRef.current?.stop();
    }
  };

  const startDrag = (event: ReactPointerEvent<HTMLDivElement>) => {
    if (event.button !== 0) return;
    event.preventDefault();
    endDragRef.current?.();
    const move = throttle(
      (clientY: number) => setHeight(heightAtPointer(clientY, metrics())),
      SHELL_DRAG_THROTTLE_MS,
    );
    const onMove = (e: PointerEvent) => move(e.clientY);
    const end = () => {
      window.removeEventListener('pointermove', onMove);
      window.removeEventListener('pointerup', end);
      window.removeEventListener('pointercancel', end);
      endDragRef.current = null;
      setDragging(false);
    };
    window.addEventListener('pointermove', onMove);
    window.addEventListener('pointerup', end);
    window.addEventListener('pointercancel', end);
    endDragRef.current = () => {
      move.cancel();
      end();
    };
    setDragging(true);
  };

  const shown = Math.min(Math.max(height, limits.min), limits.max);
  const onDividerKeyDown = (event: ReactKeyboardEvent<HTMLDivElement>) => {
    const step =
      event.key === 'ArrowUp' ? KEYBOARD_STEP_EM : event.key === 'ArrowDown' ? -KEYBOARD_STEP_EM : 0;
    if (!step) return;
    event.preventDefault();
    event.stopPropagation();
    setHeight(Math.min(Math.max(shown + step, limits.min), limits.max));
  };

  // A click in the output puts the caret back in the input, unless text is being selected there.
  const focusInput = () => {
    if (window.getSelection()?.toString()) return;
    inputRef.current?.focus();
  };

  return (
    <>
      {/* Keeps the end of the page scrollable above the panel, which covers the bottom of the window. */}
      <div className="shell-spacer" style={{ height: `${shown}em` }} aria-hidden="true" />
      <section
        id={SHELL_PANEL_ID}
        ref={panelRef}
        className={dragging ? 'shell shell--dragging' : 'shell'}
        style={{ height: `${shown}em` }}
        aria-label={t('shell.title')}
      >
        <div
          ref={dividerRef}
          className="shell__divider"
          role="separator"
          aria-orientation="horizontal"
          aria-label={t('shell.resize')}
          aria-valuenow={Math.round(shown * 100) / 100}
          aria-valuemin={Math.round(limits.min * 100) / 100}
          aria-valuemax={Number.isFinite(limits.max) ? Math.round(limits.max * 100) / 100 : undefined}
          tabIndex={0}
          onPointerDown={startDrag}
          onKeyDown={onDividerKeyDown}
        />
        <div
          ref={contentRef}
          className="shell__content"
          role="log"
          aria-label={t('shell.output')}
          onClick={focusInput}
        >
          {entries.map((entry) => (
            <Entry key={entry.id} entry={entry} />
          ))}
          <form
            className="shell__input-line"
            onSubmit={(event) => {
              event.preventDefault();
              submit();
            }}
          >
            <Icon name="chevron_right" className="shell__prompt-icon" />
            <span className="shell__folder">{folder}</span>
            <input
              ref={inputRef}
              className="shell__input"
              aria-label={t('shell.command')}
              placeholder={running ? t('shell.runningHint') : t('shell.placeholder')}
              value={text}
              readOnly={running}
              autoComplete="off"
              autoCapitalize="off"
              autoCorrect="off"
              spellCheck={false}
              onChange={(event) => setText(event.target.value)}
              onKeyDown={onInputKeyDown}
            />
            {running && (
              <button
                type="button"
                className="icon-button shell__stop"
                aria-label={t('shell.stop')}
                title={t('shell.stop')}
                onClick={() => runRef.current?.stop()}
              >
                <Icon name="stop" />
              </button>
            )}
          </form>
        </div>
      </section>
    </>
  );
}

/**
 * The shell panel at the bottom of the file browser: one command line at a time runs in the folder
 * on screen and its output streams in. Rendered only while open and when the user may use it.
 */
export function ShellPanel() {
  const available = useShellAvailable();
  const open = useShellStore((state) => state.open);
  return available && open ? <OpenShellPanel /> : null;
}
