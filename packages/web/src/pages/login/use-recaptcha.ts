import { useEffect, useRef, useState, type RefObject } from 'react';
import { startup } from '../../startup';

interface Grecaptcha {
  render: (container: HTMLElement, options: { sitekey: string }) => number;
  getResponse: (widgetId?: number) => string;
  reset: (widgetId?: number) => void;
}

declare global {
  interface Window {
    grecaptcha?: Grecaptcha;
  }
}

const SCRIPT_ID = 'recaptcha-script';
const POLL_MS = 100;

/** Adds the captcha script once; a script element made from JS is allowed by the page's CSP. */
function loadScript(): void {
  if (document.getElementById(SCRIPT_ID)) return;
  const host = (startup.ReCaptchaHost || 'https://www.google.com').replace(/\/+$/, '');
  const script = document.createElement('script');
  script.id = SCRIPT_ID;
  script.src = `${host}/recaptcha/api.js?render=explicit`;
  script.async = true;
  script.defer = true;
  document.head.appendChild(script);
}

export interface Recaptcha {
  enabled: boolean;
  container: RefObject<HTMLDivElement | null>;
  /** The token of a solved captcha, "" when unsolved or disabled. */
  response: () => string;
  reset: () => void;
}

/** Loads the captcha when the server asks for one and renders its widget into `container`. */
export function useRecaptcha(): Recaptcha {
  const enabled = startup.ReCaptcha && !!startup.ReCaptchaKey;
  const container = useRef<HTMLDivElement | null>(null);
  const [widgetId, setWidgetId] = useState<number | null>(null);

  useEffect(() => {
    if (!enabled) return;
    loadScript();
    // The script defines grecaptcha.render only once it has loaded: poll for it.
    const timer = setInterval(() => {
      const api = window.grecaptcha;
      const element = container.current;
      if (typeof api?.render !== 'function' || !element) return;
      clearInterval(timer);
      if (element.childElementCount > 0) return;
      setWidgetId(api.render(element, { sitekey: startup.ReCaptchaKey ?? '' }));
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [enabled]);

  return {
    enabled,
    container,
    response: () => (enabled && widgetId !== null ? (window.grecaptcha?.getResponse(widgetId) ?? '') : ''),
    reset: () => {
      if (enabled && widgetId !== null) window.grecaptcha?.reset(widgetId);
    },
  };
}
