import { lazy, Suspense, useEffect, useState } from 'react';
import { createBrowserRouter, Navigate, Route, RouterProvider, Routes } from 'react-router';
import { ErrorScreen } from './components/ErrorScreen';
import { AppLayout } from './components/layout/AppLayout';
import { PromptHost } from './components/prompts/PromptHost';
import { Spinner } from './components/Spinner';
import { ToastHost } from './components/toasts/ToastHost';
import { setLanguage } from './i18n';
import { Guard } from './routing/Guard';
import { RouterEffects } from './routing/RouterEffects';
import { UnknownRoute } from './routing/UnknownRoute';
import { startup } from './startup';
import { useAuthStore } from './stores/auth';

const LoginPage = lazy(() => import('./pages/login/LoginPage').then((m) => ({ default: m.LoginPage })));
const FilesPage = lazy(() => import('./pages/files/FilesPage').then((m) => ({ default: m.FilesPage })));
const SharePage = lazy(() => import('./pages/share/SharePage').then((m) => ({ default: m.SharePage })));
const TrashPage = lazy(() => import('./pages/trash/TrashPage').then((m) => ({ default: m.TrashPage })));
const ErrorPage = lazy(() => import('./pages/errors/ErrorPage').then((m) => ({ default: m.ErrorPage })));
const SettingsLayout = lazy(() =>
  import('./pages/settings/SettingsLayout').then((m) => ({ default: m.SettingsLayout })),
);
const ProfileSettings = lazy(() =>
  import('./pages/settings/profile/ProfileSettings').then((m) => ({ default: m.ProfileSettings })),
);
const SharesSettings = lazy(() =>
  import('./pages/settings/shares/SharesSettings').then((m) => ({ default: m.SharesSettings })),
);
const GlobalSettings = lazy(() =>
  import('./pages/settings/global/GlobalSettings').then((m) => ({ default: m.GlobalSettings })),
);
const UsersList = lazy(() =>
  import('./pages/settings/users/UsersList').then((m) => ({ default: m.UsersList })),
);
const AuditLog = lazy(() => import('./pages/settings/audit/AuditLog').then((m) => ({ default: m.AuditLog })));
const DavLocks = lazy(() => import('./pages/settings/locks/DavLocks').then((m) => ({ default: m.DavLocks })));
const UserEdit = lazy(() => import('./pages/settings/users/UserEdit').then((m) => ({ default: m.UserEdit })));

/** The interface language follows the signed-in user, or the browser for visitors. */
function LanguageSync() {
  const locale = useAuthStore((state) => state.user?.locale);
  useEffect(() => {
    void setLanguage(locale || navigator.language);
  }, [locale]);
  return null;
}

/** The splash in index.html covers the first paint; it goes once the app has drawn itself. */
function useRemoveSplash() {
  useEffect(() => {
    const timer = setTimeout(() => document.getElementById('loading')?.remove(), 200);
    return () => clearTimeout(timer);
  }, []);
}

function AppRoutes() {
  return (
    <Suspense fallback={<Spinner />}>
      <Routes>
        <Route
          path="/login"
          element={
            <Guard access="guest">
              <LoginPage />
            </Guard>
          }
        />
        <Route element={<AppLayout />}>
          <Route element={<Guard access="user" />}>
            <Route path="/files/*" element={<FilesPage />} />
            <Route path="/trash" element={<TrashPage />} />
            <Route path="/settings" element={<SettingsLayout />}>
              <Route index element={<Navigate to="profile" replace />} />
              <Route path="profile" element={<ProfileSettings />} />
              <Route element={<Guard access="share" />}>
                <Route path="shares" element={<SharesSettings />} />
              </Route>
              <Route element={<Guard access="admin" />}>
                <Route path="global" element={<GlobalSettings />} />
                <Route path="users" element={<UsersList />} />
                <Route path="users/new" element={<UserEdit />} />
                <Route path="users/:id" element={<UserEdit />} />
                <Route path="audit" element={<AuditLog />} />
                <Route path="locks" element={<DavLocks />} />
              </Route>
            </Route>
          </Route>
          {/* Public: visitors of a share link need no account. */}
          <Route path="/share/*" element={<SharePage />} />
          <Route path="/403" element={<ErrorPage status={403} />} />
          <Route path="/404" element={<ErrorPage status={404} />} />
          <Route path="/500" element={<ErrorPage status={500} />} />
        </Route>
        <Route path="*" element={<UnknownRoute />} />
      </Routes>
    </Suspense>
  );
}

interface AppProps {
  /** Set when the start-up sign-in (proxy or no-auth) failed: the app cannot do anything useful. */
  startupError?: { status: number; message: string };
}

/** Everything under the router: the routed pages and what every page shares. */
function Root({ startupError }: AppProps) {
  return (
    <>
      <RouterEffects />
      <LanguageSync />
      {startupError ? (
        <ErrorScreen status={startupError.status} detail={startupError.message} />
      ) : (
        <AppRoutes />
      )}
      <PromptHost />
      <ToastHost />
    </>
  );
}

export function App({ startupError }: AppProps) {
  useRemoveSplash();
  // A data router, for its navigation blocker: the editor holds back every way out (links, the
  // Back button) while it has unsaved changes. The routes themselves stay declared in JSX.
  const [router] = useState(() =>
    createBrowserRouter([{ path: '*', element: <Root startupError={startupError} /> }], {
      basename: startup.BaseURL || '/',
    }),
  );
  return <RouterProvider router={router} />;
}
