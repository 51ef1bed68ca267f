import type { ReactNode } from 'react';
import { useEffect, useRef } from 'react';
import { Link, useLocation } from 'wouter';
import { useSession } from '../api/session.tsx';
import { useWorkspace } from '../api/workspace.tsx';
import { Button } from './form.tsx';

// The frame of every signed-in page: a skip link, the navigation, the workspace switcher and
// sign-out; the page's own heading takes the focus when the route changes (screen readers
// announce the new page, keyboard users start from it).

const NAV = [
  { href: '/agents', label: 'Agents' },
  { href: '/calls', label: 'Calls' },
  { href: '/api-keys', label: 'API keys' },
  { href: '/webhooks', label: 'Webhooks' },
  { href: '/billing', label: 'Billing' },
  { href: '/knowledge-bases', label: 'Knowledge bases' },
  { href: '/phone-numbers', label: 'Phone numbers' },
  { href: '/do-not-call', label: 'Do not call' },
  { href: '/analytics', label: 'Analytics' },
  { href: '/members', label: 'Members' },
  { href: '/audit-log', label: 'Audit log' },
  { href: '/profile', label: 'Profile' },
];

function WorkspaceSwitcher() {
  const { workspace, workspaces, select } = useWorkspace();
  return (
    <div className="switcher">
      <label htmlFor="workspace-switcher">Workspace</label>
      <select id="workspace-switcher" value={workspace.id} onChange={(event) => select(event.target.value)}>
        {workspaces.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Shell({ children }: { children: ReactNode }) {
  const [location] = useLocation();
  const { signOut } = useSession();
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/agents" className="brand">
          Voice Agent Platform
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={location.startsWith(item.href) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="topbar-end">
          <WorkspaceSwitcher />
          <Button variant="secondary" onPress={() => void signOut()}>
            Log out
          </Button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/** A page's title (document and heading), focused when the page opens. */
export function PageTitle({ children, actions }: { children: string; actions?: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${children} · Voice Agent Platform`;
    heading.current?.focus({ preventScroll: true });
  }, [children]);
  return (
    <div className="page-title">
      <h1 ref={heading} tabIndex={-1}>
        {children}
      </h1>
      {actions ? <div className="actions">{actions}</div> : null}
    </div>
  );
}
