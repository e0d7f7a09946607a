import { Suspense } from 'react';
import { Outlet } from 'react-router';
import { useHelpShortcut } from '../../hooks/use-help-shortcut';
import { usePageTitleStore } from '../../hooks/use-page-title';
import { instanceName } from '../../startup';
import { Spinner } from '../Spinner';
import { UploadPanel } from '../upload/UploadPanel';
import { Header } from './Header';
import { Sidebar } from './Sidebar';

/** Header, sidebar and the routed page; signed-out visitors of error pages get the same frame. */
export function AppLayout() {
  useHelpShortcut();
  const screen = usePageTitleStore((state) => state.screen);
  return (
    <div className="layout">
      <Header />
      <Sidebar />
      <main className="main">
        {/* The screen's name heads the page for assistive technology; sighted users read it in
            the breadcrumbs, the tabs or the card titles. */}
        <h1 className="sr-only">{screen || instanceName()}</h1>
        <Suspense fallback={<Spinner />}>
          <Outlet />
        </Suspense>
      </main>
      <UploadPanel />
    </div>
  );
}
