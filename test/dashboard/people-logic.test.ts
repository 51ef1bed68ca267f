import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Member, User } from '../../sdks/typescript/src/index.ts';
import { barsOf, chartSummary, durationText, labelledDates, minutesText, niceCeiling, outcomesOf, percent, pointsOf, rangeOfDays } from '../../web/dashboard/src/pages/analytics-scale.ts';
import { actorLabel, auditFilterProblem, auditQueryOf, currentCursor, FIRST_AUDIT_PAGE, newerPage, olderPage, pageNumber, requestLabel } from '../../web/dashboard/src/pages/audit-query.ts';
import { canManageMember, grantableRoles, isLastOwner, managesPeople, memberName } from '../../web/dashboard/src/pages/people-roles.ts';
import { draftOfUser, passwordProblems, profileUpdateOf } from '../../web/dashboard/src/pages/profile-forms.ts';

// The people pages' logic that runs without a browser: roles, the audit query and paging, the
// analytics chart's scale, the profile forms.

const member = (role: Member['role'], user_id = `usr_${role}`): Member => ({ user_id, email: `${role}@example.com`, name: null, role, joined_at: '2026-11-01T00:00:00.000Z' });

describe('roles on the members page', () => {
  it('lets owners and admins manage people, and no one else', () => {
    assert.deepEqual([managesPeople('owner'), managesPeople('admin'), managesPeople('member'), managesPeople('viewer'), managesPeople(null)], [true, true, false, false, false]);
  });

  it('offers the owner role to owners only', () => {
    assert.deepEqual(grantableRoles('owner'), ['owner', 'admin', 'member', 'viewer']);
    assert.deepEqual(grantableRoles('admin'), ['admin', 'member', 'viewer']);
    assert.deepEqual(grantableRoles('member'), []);
    assert.deepEqual(grantableRoles(null), []);
  });

  it('lets an admin manage everyone but owners', () => {
    assert.equal(canManageMember('admin', member('owner')), false);
    assert.equal(canManageMember('admin', member('viewer')), true);
    assert.equal(canManageMember('owner', member('owner')), true);
    assert.equal(canManageMember('member', member('viewer')), false);
  });

  it('knows the last owner', () => {
    const one = [member('owner', 'usr_a'), member('admin', 'usr_b')];
    assert.equal(isLastOwner(one, one[0]), true);
    assert.equal(isLastOwner(one, one[1]), false);
    const two = [...one, member('owner', 'usr_c')];
    assert.equal(isLastOwner(two, two[0]), false);
  });

  it('names a member by name, else email', () => {
    assert.equal(memberName({ name: 'Grace', email: 'g@example.com' }), 'Grace');
    assert.equal(memberName({ name: '  ', email: 'g@example.com' }), 'g@example.com');
    assert.equal(memberName({ name: null, email: 'g@example.com' }), 'g@example.com');
  });
});

describe('the audit log query', () => {
  it('turns the filters into the API query: whole local days, until exclusive', () => {
    assert.deepEqual(auditQueryOf({ actor_id: '', from: '', to: '' }), {});
    const query = auditQueryOf({ actor_id: 'usr_1', from: '2026-11-02', to: '2026-11-03' });
    assert.equal(query.actor_id, 'usr_1');
    assert.equal(query.since, new Date(2026, 10, 2).toISOString());
    assert.equal(query.until, new Date(2026, 10, 4).toISOString());
    // Month ends roll over.
    assert.equal(auditQueryOf({ actor_id: '', from: '', to: '2026-11-30' }).until, new Date(2026, 11, 1).toISOString());
    assert.equal(auditQueryOf({ actor_id: '', from: 'not a date', to: '' }).since, undefined);
  });

  it('says when "To" is before "From", and not for the same day', () => {
    assert.match(String(auditFilterProblem({ actor_id: '', from: '2026-11-05', to: '2026-11-04' })), /before/);
    assert.equal(auditFilterProblem({ actor_id: '', from: '2026-11-05', to: '2026-11-05' }), undefined);
    assert.equal(auditFilterProblem({ actor_id: '', from: '2026-11-05', to: '' }), undefined);
  });

  it('reads an entry: who and what request', () => {
    assert.equal(actorLabel({ actor: { type: 'user', id: 'usr_1', name: 'ada@example.com' } }), 'ada@example.com');
    assert.equal(actorLabel({ actor: { type: 'api_key', id: 'key_1', name: 'Backend' } }), 'API key Backend');
    assert.equal(actorLabel({ actor: { type: 'user', id: 'usr_1', name: null } }), 'usr_1');
    assert.equal(requestLabel({ method: 'PATCH', route: '/v1/workspaces/:id' }), 'PATCH /v1/workspaces/:id');
    assert.equal(requestLabel({ method: null, route: null }), 'API key used');
  });

  it('pages older with next_cursor and back newer through the cursors seen', () => {
    let paging = FIRST_AUDIT_PAGE;
    assert.equal(currentCursor(paging), undefined);
    assert.equal(pageNumber(paging), 1);
    assert.equal(newerPage(paging), paging, 'no page before the first');
    paging = olderPage(paging, 'c1');
    paging = olderPage(paging, 'c2');
    assert.equal(currentCursor(paging), 'c2');
    assert.equal(pageNumber(paging), 3);
    assert.equal(olderPage(paging, null), paging, 'no page after the last');
    paging = newerPage(paging);
    assert.equal(currentCursor(paging), 'c1');
    paging = newerPage(paging);
    assert.equal(currentCursor(paging), undefined);
    assert.equal(pageNumber(paging), 1);
  });
});

describe('the analytics chart', () => {
  it('asks for the last N UTC days, today included, and leaves `to` to the API', () => {
    assert.deepEqual(rangeOfDays(7, new Date('2026-11-28T15:30:00Z')), { from: '2026-11-22T00:00:00.000Z' });
    assert.deepEqual(rangeOfDays(1, new Date('2026-11-28T00:00:00Z')), { from: '2026-11-28T00:00:00.000Z' });
  });

  it('rounds the scale up to 1, 2, 2.5 or 5 × 10ⁿ', () => {
    assert.deepEqual([0, -1, Number.NaN, 1, 3, 7, 11, 24, 26, 100, 101].map(niceCeiling), [1, 1, 1, 1, 5, 10, 20, 25, 50, 100, 200]);
    assert.equal(niceCeiling(0.05), 0.05);
    assert.equal(niceCeiling(0.0123), 0.02);
    assert.equal(niceCeiling(0.3), 0.5);
  });

  it('draws one bar per day, its height in proportion, its foot on the baseline', () => {
    const series = [
      { date: '2026-11-26', count: 0, minutes: 0, cost_usd: 0 },
      { date: '2026-11-27', count: 2, minutes: 1.5, cost_usd: 0.02 },
      { date: '2026-11-28', count: 4, minutes: 3, cost_usd: 0.05 },
    ];
    const bars = barsOf(pointsOf(series, 'count'), { width: 300, height: 100 }, 4);
    assert.equal(bars.length, 3);
    assert.deepEqual(bars.map((b) => b.height), [0, 50, 100]);
    assert.deepEqual(bars.map((b) => b.y + b.height), [100, 100, 100]);
    assert.deepEqual(bars.map((b) => b.width), [70, 70, 70]);
    assert.deepEqual(bars.map((b) => b.x), [15, 115, 215]);
    assert.deepEqual(pointsOf(series, 'cost_usd').map((p) => p.value), [0, 0.02, 0.05]);
    assert.deepEqual(barsOf([], { width: 300, height: 100 }, 1), []);
  });

  it('labels the first, middle and last dates once each', () => {
    const points = ['a', 'b', 'c', 'd', 'e'].map((date) => ({ date, value: 0 }));
    assert.deepEqual(labelledDates(points), ['a', 'c', 'e']);
    assert.deepEqual(labelledDates(points.slice(0, 2)), ['a', 'b']);
    assert.deepEqual(labelledDates(points.slice(0, 1)), ['a']);
    assert.deepEqual(labelledDates([]), []);
  });

  it('says in words what the chart shows', () => {
    const calls = (n: number) => `${n} calls`;
    assert.equal(chartSummary([{ date: 'd1', value: 1 }, { date: 'd2', value: 3 }], calls), 'd1 to d2: 4 calls in all; the most on d2, 3 calls.');
    assert.equal(chartSummary([{ date: 'd1', value: 0 }], calls), 'd1 to d1: nothing on any day.');
    assert.equal(chartSummary([], calls), 'No days to show.');
  });

  it('reads the figures', () => {
    assert.equal(percent(0.1234), '12.3 %');
    assert.equal(percent(0), '0.0 %');
    assert.equal(durationText(83_450), '1 min 23 s');
    assert.equal(durationText(42_400), '42 s');
    assert.equal(durationText(0), '0 s');
    assert.equal(minutesText(1.256), '1.26 min');
  });

  it('lists the outcomes most frequent first, with their share', () => {
    assert.deepEqual(outcomesOf({ total_calls: 4, by_status: { failed: 1, completed: 3, busy: 0 } }), [
      { status: 'completed', count: 3, share: 0.75 },
      { status: 'failed', count: 1, share: 0.25 },
    ]);
    assert.deepEqual(outcomesOf({ total_calls: 0, by_status: {} }), []);
  });
});

describe('the profile forms', () => {
  const user: User = { id: 'usr_1', email: 'ada@example.com', name: 'Ada', email_verified: true, created_at: '', updated_at: '' };

  it('sends only what changed; a new email with the current password; an emptied name as null', () => {
    assert.equal(profileUpdateOf(user, draftOfUser(user)), undefined);
    assert.equal(profileUpdateOf(user, { ...draftOfUser(user), email: ' ADA@example.com ' }), undefined, 'the same address in other case');
    assert.deepEqual(profileUpdateOf(user, { ...draftOfUser(user), name: ' Ada L. ' }), { name: 'Ada L.' });
    assert.deepEqual(profileUpdateOf(user, { ...draftOfUser(user), name: '' }), { name: null });
    assert.deepEqual(profileUpdateOf(user, { name: 'Ada', email: 'ada@new.example.com', current_password: 'secret' }), { email: 'ada@new.example.com', current_password: 'secret' });
    assert.deepEqual(profileUpdateOf({ ...user, name: null }, { name: '', email: user.email, current_password: '' }), undefined);
  });

  it('checks a password change before sending it', () => {
    assert.deepEqual(passwordProblems({ current_password: 'old secret', new_password: 'new secret', confirm_password: 'new secret' }), {});
    assert.deepEqual(Object.keys(passwordProblems({ current_password: '', new_password: 'short', confirm_password: 'other' })).sort(), ['confirm_password', 'current_password', 'new_password']);
    assert.match(String(passwordProblems({ current_password: 'same secret', new_password: 'same secret', confirm_password: 'same secret' }).new_password), /other than/);
  });
});
