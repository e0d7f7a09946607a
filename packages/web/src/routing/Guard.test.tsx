import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { useAuthStore } from '../stores/auth';
import { tokenUser } from '../test/fixtures';
import { Guard } from './Guard';

function Where({ name }: { name: string }) {
  const location = useLocation();
  return <p>{`${name} ${location.pathname}${location.search}`}</p>;
}

function App({ at }: { at: string }) {
  return (
    <MemoryRouter initialEntries={[at]}>
      <Routes>
        <Route
          path="/login"
          element={
            <Guard access="guest">
              <Where name="login" />
            </Guard>
          }
        />
        <Route element={<Guard access="user" />}>
          <Route path="/files/*" element={<Where name="files" />} />
          <Route element={<Guard access="admin" />}>
            <Route path="/settings/users" element={<Where name="users" />} />
          </Route>
        </Route>
        <Route path="/403" element={<Where name="forbidden" />} />
      </Routes>
    </MemoryRouter>
  );
}

describe('Guard', () => {
  afterEach(() => {
    cleanup();
    useAuthStore.setState({ user: null });
  });

  it('sends signed-out visitors to the login screen, remembering the page', () => {
    render(<App at="/files/docs/" />);
    expect(screen.getByText('login /login?redirect=%2Ffiles%2Fdocs%2F')).toBeTruthy();
  });

  it('sends non-admins away from admin pages', () => {
    useAuthStore.setState({ user: tokenUser() });
    render(<App at="/settings/users" />);
    expect(screen.getByText('forbidden /403')).toBeTruthy();
  });

  it('lets admins in', () => {
    useAuthStore.setState({ user: tokenUser({ admin: true }) });
    render(<App at="/settings/users" />);
    expect(screen.getByText('users /settings/users')).toBeTruthy();
  });

  it('moves a signed-in user from the login screen to the wanted page', () => {
    useAuthStore.setState({ user: tokenUser() });
    render(<App at="/login?redirect=%2Ffiles%2Fa%2F" />);
    expect(screen.getByText('files /files/a/')).toBeTruthy();
  });
});
