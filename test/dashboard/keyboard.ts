import type { Page } from 'playwright-core';

// The keyboard check of every dashboard page (run by checkPage): the page is walked with the Tab
// key from its top, and every visible, enabled interactive control must get the focus at some
// point, while the focus never lands on an invisible element (zero-size or visibility hidden).
// An unreachable control (or a keyboard trap, which leaves the controls after it unreached) fails
// with the control's role and accessible name (or its outerHTML, cut) and the page's name.
//
// Composite widgets (a radio group, tabs, a listbox, a grid, a menu, a toolbar, same-name native
// radios) take ONE tab stop and move inside by the arrow keys (a roving tabindex): a control inside
// such a group counts as reached when any member of its group got the focus.

/** What counts as an interactive control (hidden, disabled and aria-hidden ones are left out later). */
export const CONTROLS = [
  'a[href]',
  'button',
  'input:not([type="hidden"])',
  'select',
  'textarea',
  'summary',
  '[contenteditable="true"]',
  '[tabindex]:not([tabindex^="-"])',
  ...['button', 'link', 'tab', 'checkbox', 'radio', 'switch', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'slider', 'spinbutton', 'textbox', 'combobox', 'searchbox', 'treeitem'].map((r) => `[role="${r}"]`),
].join(', ');

/** The roles whose members share one tab stop (see above). */
export const GROUPS = ['radiogroup', 'tablist', 'listbox', 'grid', 'treegrid', 'tree', 'menu', 'menubar', 'toolbar'].map((r) => `[role="${r}"]`).join(', ');

interface Walk {
  unreached: string[];
  invisible: string[];
  last: string;
}

// In the page: marks each control with its index and group key, and records each focus as it
// comes (a focusin listener, so the presses need no round trip each). Returns how many controls.
const PREPARE = `((controls, groups) => {
  const describe = (e) => {
    const role = e.getAttribute('role') || e.tagName.toLowerCase();
    const name = (e.getAttribute('aria-label') || e.labels?.[0]?.textContent || e.textContent || e.getAttribute('title') || e.getAttribute('placeholder') || '').trim().replace(/\\s+/g, ' ');
    return name ? role + ' "' + name.slice(0, 80) + '"' : e.outerHTML.slice(0, 120);
  };
  const visible = (e) => {
    const box = e.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && e.checkVisibility({ visibilityProperty: true });
  };
  const enabled = (e) => !e.matches(':disabled, [aria-disabled="true"]') && !e.closest('[aria-hidden="true"], [inert]');
  // React Aria's DismissButton: the 1 px button, out of the tab order, that a dismissable modal
  // holds for screen readers' virtual cursor; not a keyboard barrier, as Escape closes the modal.
  const dismiss = (e) => e.matches('button[tabindex="-1"]') && e.style.width === '1px' && e.style.height === '1px' && getComputedStyle(e.parentElement).clipPath === 'inset(50%)';
  const list = [...document.querySelectorAll(controls)].filter((e) => enabled(e) && visible(e) && !dismiss(e));
  // Each control's group: its composite widget ancestor (or itself), or its native radios' name.
  const groupIds = new Map();
  const groupOf = (e) => {
    const group = e.closest(groups);
    if (group) {
      if (!groupIds.has(group)) groupIds.set(group, 'group ' + groupIds.size);
      return groupIds.get(group);
    }
    return e.matches('input[type="radio"]') && e.name ? 'radios ' + e.name : null;
  };
  const state = { controls: list.map((e) => ({ name: describe(e), group: groupOf(e) })), reached: new Set(), groups: new Set(), invisible: [], describe, before: document.activeElement };
  state.onFocus = (event) => {
    const e = event.target;
    if (!(e instanceof Element) || e.id === '__keyboard-start') return;
    if (!visible(e)) state.invisible.push(describe(e));
    const group = groupOf(e);
    if (group) state.groups.add(group);
    for (const [i, c] of list.entries()) if (c === e || c.contains(e)) state.reached.add(i);
  };
  document.addEventListener('focusin', state.onFocus, true);
  window.__keyboardWalk = state;
  // The walk starts at the top: from a focused element placed before everything else.
  const start = document.createElement('span');
  start.tabIndex = -1;
  start.id = '__keyboard-start';
  document.body.prepend(start);
  start.focus({ preventScroll: true });
  return list.length;
})`;

// In the page: what the walk did not reach, where the focus went invisible, and ends the walk.
const FINISH = `(() => {
  const state = window.__keyboardWalk;
  document.removeEventListener('focusin', state.onFocus, true);
  document.getElementById('__keyboard-start')?.remove();
  const unreached = state.controls.filter((c, i) => !state.reached.has(i) && !(c.group && state.groups.has(c.group))).map((c) => c.name);
  const active = document.activeElement;
  const last = active && active !== document.body ? state.describe(active) : 'the page itself';
  delete window.__keyboardWalk;
  // Leaves the focus where it was.
  if (state.before?.isConnected && state.before !== document.body) state.before.focus({ preventScroll: true });
  else document.activeElement?.blur();
  return { unreached, invisible: [...new Set(state.invisible)], last };
})()`;

/** Walks the page with Tab from its top: what it found wrong, in words (empty when none). */
export async function keyboardProblems(page: Page, name: string): Promise<string[]> {
  const before = (await page.evaluate('[window.scrollX, window.scrollY]')) as [number, number];
  const count = (await page.evaluate(`${PREPARE}(${JSON.stringify(CONTROLS)}, ${JSON.stringify(GROUPS)})`)) as number;
  for (let i = 0; i < count + 10; i++) await page.keyboard.press('Tab');
  const walk = (await page.evaluate(FINISH)) as Walk;
  await page.evaluate(`window.scrollTo(${before[0]}, ${before[1]})`);
  return [
    ...walk.unreached.map((c) => `${name}: ${c} is never reached by the Tab key (the focus ended on ${walk.last})`),
    ...walk.invisible.map((c) => `${name}: the Tab key focuses ${c}, which is invisible`),
  ];
}
