import { Suspense } from 'react';
import { Outlet } from 'react-router';
import { useHelpShortcut } from '../../hooks/use-help-shortcut';
import { JobsPanel } from '../jobs/JobsPanel';
import { Spinner } from '../Spinner';
import { UploadPanel } from '../upload/UploadPanel';
import { Header } from './Header';
import { Sidebar } from './Sidebar';

/** Header, sidebar and the routed page; signed-out visitors of error pages get the same frame. */
export function AppLayout() {
  useHelpShortcut();
  return (
    <div className="layout">
      <Header />
      <Sidebar />
      <main className="main">
        <Suspense fallback={<Spinner />}>
          <Outlet />
        </Suspense>
      </main>
      <UploadPanel />
      <JobsPanel />
    </div>
  );
}
