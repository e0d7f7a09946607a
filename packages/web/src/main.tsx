// Only the filled family is used: material-icons.css would ship all five (1.8 MB of fonts).
import 'material-icons/iconfont/filled.css';
import './styles/index.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { errorStatus, errorText } from './api/client';
import { App } from './app';
import { readStoredToken } from './auth/token-storage';
import { initI18n } from './i18n';
import { useAuthStore } from './stores/auth';
import { applyTheme, useThemeStore } from './stores/theme';

async function start(): Promise<void> {
  applyTheme(useThemeStore.getState().theme);
  let startupError: { status: number; message: string } | undefined;
  try {
    await useAuthStore.getState().initialize();
  } catch (error) {
    startupError = { status: errorStatus(error), message: errorText(error) };
  }
  // Loading the user's language before the first paint avoids a flash of English.
  await initI18n(useAuthStore.getState().user?.locale || navigator.language);

  const container = document.getElementById('root');
  if (!container) throw new Error('index.html has no #root element');
  createRoot(container).render(
    <StrictMode>
      <App startupError={startupError} />
    </StrictMode>,
  );
}

// A page restored from the back-forward cache keeps the memory of the session it was left with.
// When that session has ended (logout in this or another tab), a fresh load shows what is true now.
window.addEventListener('pageshow', (event) => {
  if (event.persisted && readStoredToken() !== useAuthStore.getState().jwt) window.location.reload();
});

void start();
