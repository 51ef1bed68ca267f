import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { launchChromium } from '../../src/modules/widgets/browser-helpers.ts';
import { keyboardProblems } from './keyboard.ts';

// The keyboard check itself (keyboard.ts), on static pages in Debian's Chromium: a well-formed
// page (a composite widget with one tab stop, a modal's screen-reader-only dismiss button) passes;
// a control taken out of the tab order, a keyboard trap, and a focus landing on an invisible
// element each fail, named.

const WELL_FORMED = `<!doctype html><html lang="en"><body>
  <nav aria-label="Main"><a href="#a">First</a> <a href="#b">Second</a></nav>
  <main>
    <button type="button">Save</button> <input aria-label="Name"> <select aria-label="Size"><option>S</option></select>
    <div role="radiogroup" aria-label="Colour">
      <span role="radio" aria-checked="true" tabindex="0">Red</span>
      <span role="radio" aria-checked="false" tabindex="-1">Blue</span>
    </div>
    <label><input type="radio" name="plan" checked> Small</label> <label><input type="radio" name="plan"> Large</label>
    <button type="button" disabled>Disabled</button> <button type="button" hidden>Hidden</button>
    <div aria-hidden="true"><button type="button" tabindex="-1">Decoration</button></div>
    <span style="position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)"><button aria-label="Dismiss" tabindex="-1" style="width:1px;height:1px"></button></span>
  </main></body></html>`;

describe('the keyboard check', async () => {
  const browser = await launchChromium();
  const page = await browser.newPage();

  it('passes a well-formed page, a radio group being one tab stop', async () => {
    await page.setContent(WELL_FORMED);
    assert.deepEqual(await keyboardProblems(page, 'well-formed'), []);
  });

  it('names a control taken out of the tab order, and a div acting as a button', async () => {
    await page.setContent(WELL_FORMED.replace('</main>', `<button type="button" tabindex="-1">Delete</button>
      <div role="button" tabindex="-1" onclick="void 0" style="padding:4px;border:1px solid">Archive</div></main>`));
    const problems = await keyboardProblems(page, 'planted');
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(problems[0], /^planted: button "Delete" is never reached by the Tab key/);
    assert.match(problems[1], /^planted: button "Archive" is never reached by the Tab key/);
  });

  it('names the controls after a keyboard trap', async () => {
    // The field sends the focus back to itself whenever it leaves.
    await page.setContent(WELL_FORMED.replace('<input aria-label="Name">', `<input aria-label="Name" onblur="setTimeout(() => this.focus())">`));
    await page.evaluate(`document.querySelector('input[aria-label="Name"]').addEventListener('keydown', (e) => { if (e.key === 'Tab') e.preventDefault(); })`);
    const problems = await keyboardProblems(page, 'trapped');
    assert.ok(problems.some((p) => /^trapped: select "Size" is never reached by the Tab key \(the focus ended on input "Name"\)/.test(p)), problems.join('\n'));
  });

  it('names a focus landing on an invisible element', async () => {
    await page.setContent(WELL_FORMED.replace('</main>', '<a href="#c" style="display:inline-block;width:0;height:0;overflow:hidden">Ghost</a></main>'));
    const problems = await keyboardProblems(page, 'ghost');
    assert.deepEqual(problems, ['ghost: the Tab key focuses a "Ghost", which is invisible']);
  });
});
