import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dateRangeOf, perDayOf } from './date-range.ts';

describe('perDayOf', () => {
  const range = { from: new Date('2026-03-30T18:00:00Z'), to: new Date('2026-04-02T06:00:00Z') };

  it('gives every UTC day of the range, in order, from the day its row names or from none', () => {
    const rows = [
      { day: '2026-04-02', n: 7 },
      { day: '2026-03-31', n: 2 },
    ];
    assert.deepEqual(
      perDayOf(range, rows, (row, date) => ({ date, n: row?.n ?? 0 })),
      [
        { date: '2026-03-30', n: 0 },
        { date: '2026-03-31', n: 2 },
        { date: '2026-04-01', n: 0 },
        { date: '2026-04-02', n: 7 },
      ],
    );
  });

  it('ignores rows of days outside the range, and gives an entry per day without any row', () => {
    const days = perDayOf(range, [{ day: '2026-03-29' }, { day: '2026-04-03' }], (row, date) => `${date}:${row ? 'row' : 'none'}`);
    assert.deepEqual(days, ['2026-03-30:none', '2026-03-31:none', '2026-04-01:none', '2026-04-02:none']);
  });

  it('covers the default range (the last 30 days) with 31 days when it starts inside a day', () => {
    const days = perDayOf(dateRangeOf({}, new Date('2026-05-10T12:00:00Z')), [], (_row, date) => date);
    assert.equal(days.length, 31);
    assert.deepEqual([days[0], days.at(-1)], ['2026-04-10', '2026-05-10']);
  });

  it('ends before `to`: a range ending at midnight does not include that day', () => {
    const days = perDayOf({ from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-01-03T00:00:00Z') }, [], (_row, date) => date);
    assert.deepEqual(days, ['2026-01-01', '2026-01-02']);
  });
});
