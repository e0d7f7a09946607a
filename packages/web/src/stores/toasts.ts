import { create } from 'zustand';
import { errorText } from '../api/client';

export type ToastKind = 'success' | 'error';

export interface Toast {
  id: number;
  kind: ToastKind;
  message: string;
}

export const MAX_TOASTS = 10;
export const SUCCESS_TOAST_MS = 4000;

interface ToastState {
  toasts: Toast[];
  /** Shows a message that goes away by itself after a few seconds. */
  showSuccess: (message: string) => void;
  /** Shows an error that stays until dismissed. */
  showError: (error: unknown) => void;
  dismiss: (id: number) => void;
}

let nextToastId = 1;

export const useToastStore = create<ToastState>()((set, get) => {
  const push = (kind: ToastKind, message: string): number => {
    const id = nextToastId++;
    // The oldest toasts make room: a burst of failures must not bury the screen.
    set((state) => ({ toasts: [...state.toasts, { id, kind, message }].slice(-MAX_TOASTS) }));
    return id;
  };

  return {
    toasts: [],
    showSuccess: (message) => {
      const id = push('success', message);
      setTimeout(() => get().dismiss(id), SUCCESS_TOAST_MS);
    },
    showError: (error) => {
      push('error', typeof error === 'string' ? error : errorText(error));
    },
    dismiss: (id) => set((state) => ({ toasts: state.toasts.filter((toast) => toast.id !== id) })),
  };
});

/** Shortcuts for code outside components. */
export const showSuccess = (message: string): void => useToastStore.getState().showSuccess(message);
export const showError = (error: unknown): void => useToastStore.getState().showError(error);
