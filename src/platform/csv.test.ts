import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { csvStream, neutraliseFormula } from './csv.ts';

// The formula rule of the CSV exports (OWASP CSV Injection): what is prefixed, what stays readable.

describe('neutraliseFormula', () => {
  const prefixed: Array<[string, string]> = [
    ['=cmd|\' /C calc\'!A0', "'=cmd|' /C calc'!A0"],
    ['+SUM(1+1)', "'+SUM(1+1)"],
    ['-1+2', "'-1+2"],
    ['-', "'-"],
    ['@evil', "'@evil"],
    ['\tTAB', "'\tTAB"],
    ['\r=1', "'\r=1"],
    ['=1', "'=1"],
    ['+1', "'+1"],
    ['+0123456789', "'+0123456789"],
    ['+1 555 010 0200', "'+1 555 010 0200"],
    ['-2)*cmd', "'-2)*cmd"],
    ['\uFF1DHYPERLINK("x")', '\'\uFF1DHYPERLINK("x")'],
  ];
  for (const [input, expected] of prefixed) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => assert.equal(neutraliseFormula(input), expected));
  }

  const kept = ['-2', '-0.5', '42', '+15551234567', '+442071838750', '+1555', 'ada@example.com', 'Contact 7', '', "'=already", 'a=b', ' =x'];
  for (const input of kept) {
    it(`keeps ${JSON.stringify(input)}`, () => assert.equal(neutraliseFormula(input), input));
  }
});

describe('csvStream', () => {
  it('neutralises string cells and header cells, keeps numbers, and the CSV still parses back', async () => {
    const csv = csvStream(['phone', '=header', 'n', 'text']);
    csv.write(['+15551234567', '@SUM(A1)', -2, '=1+1,"quoted"']);
    csv.end();
    let out = '';
    for await (const chunk of csv) out += chunk;
    const rows = parse(out) as string[][];
    assert.deepEqual(rows, [
      ['phone', "'=header", 'n', 'text'],
      ['+15551234567', "'@SUM(A1)", '-2', '\'=1+1,"quoted"'],
    ]);
  });
});
