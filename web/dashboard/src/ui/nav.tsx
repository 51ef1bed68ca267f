import { useState } from 'react';
import { Link, useLocation } from 'wouter';

// The main navigation: every page in four groups. Wide screens show it as a side column; below
// 900 px it folds behind a "Menu" button (a disclosure: aria-expanded, closed again once a page
// is chosen), so a phone's first screen is the page, not seventeen links.

export const NAV_GROUPS = [
  {
    label: 'Build',
    items: [
      { href: '/agents', label: 'Agents' },
      { href: '/knowledge-bases', label: 'Knowledge bases' },
      { href: '/widgets', label: 'Widgets' },
      { href: '/phone-numbers', label: 'Phone numbers' },
    ],
  },
  {
    label: 'Operate',
    items: [
      { href: '/calls', label: 'Calls' },
      { href: '/campaigns', label: 'Campaigns' },
      { href: '/schedules', label: 'Schedules' },
      { href: '/voice-sessions', label: 'Voice sessions' },
      { href: '/do-not-call', label: 'Do not call' },
    ],
  },
  {
    label: 'Insights',
    items: [
      { href: '/analytics', label: 'Analytics' },
      { href: '/audit-log', label: 'Audit log' },
    ],
  },
  {
    label: 'Settings',
    items: [
      { href: '/api-keys', label: 'API keys' },
      { href: '/webhooks', label: 'Webhooks' },
      { href: '/billing', label: 'Billing' },
      { href: '/members', label: 'Members' },
      { href: '/branding', label: 'Branding' },
      { href: '/profile', label: 'Profile' },
    ],
  },
];

/** Whether `location` is the page `href` or one below it (`/calls/call_1` is under Calls). */
export const isUnder = (location: string, href: string) => location === href || location.startsWith(`${href}/`);

export function MenuButton({ open, onToggle }: { open: boolean; onToggle: () => void }) {
  return (
    <button type="button" className="menu-button" aria-expanded={open} aria-controls="main-nav" onClick={onToggle}>
      Menu
    </button>
  );
}

export function MainNav({ open, onNavigate }: { open: boolean; onNavigate: () => void }) {
  const [location] = useLocation();
  return (
    <nav id="main-nav" aria-label="Main" className={open ? 'sidenav open' : 'sidenav'}>
      {NAV_GROUPS.map((group) => (
        <div key={group.label} className="nav-group">
          <span className="nav-group-label" id={`nav-${group.label}`}>
            {group.label}
          </span>
          <ul aria-labelledby={`nav-${group.label}`}>
            {group.items.map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={isUnder(location, item.href) ? 'page' : undefined} onClick={onNavigate}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}

/** The menu's state: open or folded, folded again whenever the page changes. */
export function useMenu() {
  const [open, setOpen] = useState(false);
  const [location] = useLocation();
  const [openedAt, setOpenedAt] = useState(location);
  // Back and forward change the page without a click on a link: fold the menu then too.
  if (openedAt !== location) {
    setOpenedAt(location);
    setOpen(false);
  }
  return { open, toggle: () => setOpen((was) => !was), close: () => setOpen(false) };
}
