import type { ReactNode } from 'react';
import { useEffect, useRef } from 'react';
import { Link } from 'wouter';
import { useSession } from '../api/session.tsx';
import { useWorkspace } from '../api/workspace.tsx';
import { Button } from './form.tsx';
import { MainNav, MenuButton, useMenu } from './nav.tsx';

// The frame of every signed-in page: a skip link, the navigation, the workspace switcher and
// sign-out; the page's own heading takes the focus when the route changes (screen readers
// announce the new page, keyboard users start from it).


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
  const { signOut } = useSession();
  const menu = useMenu();
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <MenuButton open={menu.open} onToggle={menu.toggle} />
        <Link href="/agents" className="brand">
          Voice Agent Platform
        </Link>
        <div className="topbar-end">
          <WorkspaceSwitcher />
          <Button variant="secondary" onPress={() => void signOut()}>
            Log out
          </Button>
        </div>
      </header>
      <div className="shell-body">
        <MainNav open={menu.open} onNavigate={menu.close} />
        <main id="main" tabIndex={-1}>
          {children}
        </main>
      </div>
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
