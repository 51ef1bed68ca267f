import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectDelimiter, MAX_DATA_ROWS, MAX_UPLOAD_BYTES, MAX_VALUE_LENGTH, MAX_VARIABLES, parseContactsCsv } from './contacts-csv.ts';

// The rules of a contact upload (contacts-csv.ts), the parser called directly: the delimiter of
// the header line, the header (phone column and its aliases, timezone, variables, duplicates,
// limits), each data row accepted or rejected with its reason, duplicates, the limits exactly at
// and one past them. campaigns.test.ts drives the same through the HTTP upload.

const bytes = (text: string) => new TextEncoder().encode(text);
const parse = (text: string, country: string | null = null) => parseContactsCsv(bytes(text), country);
const P1 = '+15555550101';
const P2 = '+15555550102';
const P3 = '+15555550103';

async function accepted(text: string, country: string | null = null) {
  const result = await parse(text, country);
  assert.ok(result.ok, JSON.stringify(result));
  return result;
}

describe('detectDelimiter', () => {
  it('the most frequent of comma, semicolon and tab on the header line', () => {
    assert.equal(detectDelimiter('phone,name,note'), ',');
    assert.equal(detectDelimiter('phone;name;note,x'), ';');
    assert.equal(detectDelimiter('phone\tname\tnote;x'), '\t');
    assert.equal(detectDelimiter('a,b;c;d\te\tf\tg'), '\t');
  });

  it('a comma when the line has none, and on a tie the earlier of comma, semicolon, tab', () => {
    assert.equal(detectDelimiter('phone'), ',');
    assert.equal(detectDelimiter(''), ',');
    assert.equal(detectDelimiter('a,b;c'), ',');
    assert.equal(detectDelimiter('a;b\tc'), ';');
    assert.equal(detectDelimiter('a\tb,c'), ',');
  });

  it('reads the header line only: stops at the first line feed or carriage return', () => {
    assert.equal(detectDelimiter('phone;name\n,,,,,,'), ';');
    assert.equal(detectDelimiter('phone;name\r,,,,,,\n'), ';');
  });

  it('ignores what is quoted, a quoted line break included', () => {
    assert.equal(detectDelimiter('"a,b,c";d'), ';');
    assert.equal(detectDelimiter('"x\n,,,";y;z\n,,,,,'), ';');
    assert.equal(detectDelimiter('"a;b";"c;d",e,f'), ',');
  });
});

describe('parseContactsCsv: the header', () => {
  it('accepts the file whole: rows, E.164 phones, variables in header order, trimmed names and values', async () => {
    assert.deepEqual(await parse(` phone , Name ,note\n${P1}, Ann , first \n+1 555 555 0102,Bob,\n`), {
      ok: true,
      contacts: [
        { row: 2, phone: P1, variables: { Name: 'Ann', note: 'first' }, timezone: null },
        { row: 3, phone: P2, variables: { Name: 'Bob', note: '' }, timezone: null },
      ],
      rejected: [],
      duplicates: 0,
      variableNames: ['Name', 'note'],
    });
  });

  it('finds the phone column by phone, phone_number, number or to, in that order of preference, in any case', async () => {
    const cases: Array<[string, string[]]> = [
      ['to,number,phone_number,PHONE', ['to', 'number', 'phone_number']],
      ['to,number,Phone_Number', ['to', 'number']],
      ['to,Number', ['to']],
      ['TO,x', ['x']],
    ];
    for (const [header, variableNames] of cases) {
      const values = header.split(',').map((name) => (variableNames.includes(name) ? `v-${name}` : P1));
      const result = await accepted(`${header}\n${values.join(',')}\n`);
      assert.deepEqual(result.variableNames, variableNames, header);
      assert.equal(result.contacts[0].phone, P1, header);
    }
  });

  it('refuses a header without a phone column', async () => {
    assert.deepEqual(await parse('name,phones,telephone\nAnn,+15555550101,x\n'), { ok: false, status: 422, message: 'the header has no phone column (phone, phone_number, number or to)' });
  });

  it('refuses a column named twice, in any case; unnamed columns may repeat and are not variables', async () => {
    assert.deepEqual(await parse('phone,Name,name\n'), { ok: false, status: 422, message: 'the header names a column twice' });
    assert.deepEqual(await parse('phone,phone\n'), { ok: false, status: 422, message: 'the header names a column twice' });
    const result = await accepted(`,phone,,name,\nx,${P1},y,Ann,z\n`);
    assert.deepEqual(result.variableNames, ['name']);
    assert.deepEqual(result.contacts[0].variables, { name: 'Ann' });
  });

  it('the header is the first line that is not blank; rows keep the line numbers they start on in the file', async () => {
    const result = await accepted(`\n , ,\n\nphone,name\n\n${P1},Ann\n ,\n${P2},"two\nlines"\n`);
    assert.deepEqual(result.contacts, [
      { row: 6, phone: P1, variables: { name: 'Ann' }, timezone: null },
      { row: 8, phone: P2, variables: { name: 'two\nlines' }, timezone: null },
    ]);
  });

  it('a blank row is skipped, but a row with one empty field is read', async () => {
    const result = await accepted(`phone,name,note\n${P1},,\n`);
    assert.deepEqual(result.contacts, [{ row: 2, phone: P1, variables: { name: '', note: '' }, timezone: null }]);
  });

  it('refuses a file without a header: empty, or blank lines only', async () => {
    for (const text of ['', '\n\n', ' , ,\n\r\n'])
      assert.deepEqual(await parse(text), { ok: false, status: 422, message: 'the file has no header row' }, JSON.stringify(text));
  });

  it(`${MAX_VARIABLES} variable columns, besides phone, timezone and unnamed ones; not one more`, async () => {
    const names = Array.from({ length: MAX_VARIABLES }, (_, i) => `v${i}`);
    const result = await accepted(`timezone,phone,,${names.join(',')}\n`);
    assert.deepEqual(result.variableNames, names);
    assert.deepEqual(await parse(`timezone,phone,${names.join(',')},one_more\n`), { ok: false, status: 422, message: `at most ${MAX_VARIABLES} variable columns` });
  });

  it('a column name of 100 characters; not 101', async () => {
    const long = 'c'.repeat(100);
    assert.deepEqual((await accepted(`phone,${long}\n`)).variableNames, [long]);
    assert.deepEqual(await parse(`phone,x,${long}d\n`), { ok: false, status: 422, message: 'a column name is longer than 100 characters' });
  });
});

describe('parseContactsCsv: delimiters, BOM, quoting', () => {
  it('reads semicolon and tab files by their header line', async () => {
    for (const d of [';', '\t']) {
      const result = await accepted(`phone${d}name${d}note\n${P1}${d}Ann, Jr.${d}x\n`);
      assert.deepEqual(result.contacts, [{ row: 2, phone: P1, variables: { name: 'Ann, Jr.', note: 'x' }, timezone: null }], JSON.stringify(d));
    }
  });

  it('drops a UTF-8 byte-order mark, before a quoted header too; CRLF line ends', async () => {
    const result = await accepted(`\uFEFF"phone";"name"\r\n${P1};Ann\r\n`);
    assert.deepEqual(result.contacts, [{ row: 2, phone: P1, variables: { name: 'Ann' }, timezone: null }]);
    assert.deepEqual(result.variableNames, ['name']);
  });

  it('reads a stray quote as it stands, and every row after it: none is swallowed', async () => {
    const result = await accepted(`phone,name\n${P1},"Ann" Jr\n${P2},5'10"\n${P3},a"b\n+15555550104,Dan\n`);
    assert.deepEqual(result.rejected, []);
    assert.deepEqual(
      result.contacts.map((c) => [c.row, c.variables.name]),
      [
        [2, '"Ann" Jr'],
        [3, `5'10"`],
        [4, 'a"b'],
        [5, 'Dan'],
      ],
    );
  });

  it('an unclosed quote is a malformed record at the line it opens on: the last rejected row', async () => {
    const result = await accepted(`phone,name\n${P1},Ann\n\n${P2},"open\n${P3},Cy\n`);
    assert.deepEqual(result.contacts.map((c) => c.row), [2]);
    assert.deepEqual(result.rejected, [{ row: 4, reason: 'malformed CSV: a quoted cell is never closed (the rest of the file would be its value)' }]);
    const after = await accepted(`phone,name\nnope,a\n${P1},"open\n`);
    assert.deepEqual(after.rejected.map((r) => r.row), [2, 3]);
  });

  it('numbers a record by the line it starts on: quoted line breaks of LF, CRLF or CR, blank lines, a BOM', async () => {
    for (const end of ['\n', '\r\n', '\r']) {
      const text = `\uFEFFphone,name${end}${P1},"one${end}two${end}three"${end}${end}nope,"x${end}y"${end}${P2},Bob${end}`;
      const result = await accepted(text);
      assert.deepEqual(result.contacts.map((c) => [c.row, c.variables.name]), [[2, `one${end}two${end}three`], [8, 'Bob']], JSON.stringify(end));
      assert.deepEqual(result.rejected, [{ row: 6, reason: 'not a possible phone number: nope' }], JSON.stringify(end));
    }
  });
});

describe('parseContactsCsv: data rows', () => {
  it('a row of as many fields as the header, or fewer; not more', async () => {
    const result = await accepted(`name,phone,note\nAnn,${P1},x\nBob,${P2}\nCid,${P3},y,\nDan\n`);
    assert.deepEqual(result, {
      ok: true,
      contacts: [
        { row: 2, phone: P1, variables: { name: 'Ann', note: 'x' }, timezone: null },
        { row: 3, phone: P2, variables: { name: 'Bob', note: '' }, timezone: null },
      ],
      rejected: [
        { row: 4, reason: '4 fields, the header has 3' },
        { row: 5, reason: 'no phone number' },
      ],
      duplicates: 0,
      variableNames: ['name', 'note'],
    });
  });

  it('normalises national numbers with the default country; without one they are rejected, cut at 40 characters', async () => {
    const text = `phone\n07700 900123\n+44 7700 900124\n`;
    assert.deepEqual((await accepted(text, 'GB')).contacts.map((c) => c.phone), ['+447700900123', '+447700900124']);
    assert.deepEqual((await accepted(text, null)).rejected, [{ row: 2, reason: 'not a possible phone number: 07700 900123' }]);
    const long = `call-me-${'9'.repeat(50)}`;
    assert.deepEqual((await accepted(`phone\n${long}\n12\n`, 'US')).rejected, [
      { row: 2, reason: `not a possible phone number: ${long.slice(0, 40)}` },
      { row: 3, reason: 'not a possible phone number: 12' },
    ]);
  });

  it('a timezone column gives a contact its zone (empty or missing: none); an unknown zone is rejected, cut at 64 characters', async () => {
    const badZone = `Mars/${'x'.repeat(80)}`;
    const result = await accepted(`TimeZone,phone,name\nEurope/Paris,${P1},Ann\n,${P2},Bob\nMars/Olympus,${P3},Cid\n${badZone},+15555550104\n`);
    assert.deepEqual(result, {
      ok: true,
      contacts: [
        { row: 2, phone: P1, variables: { name: 'Ann' }, timezone: 'Europe/Paris' },
        { row: 3, phone: P2, variables: { name: 'Bob' }, timezone: null },
      ],
      rejected: [
        { row: 4, reason: 'unknown time zone: Mars/Olympus' },
        { row: 5, reason: `unknown time zone: ${badZone.slice(0, 64)}` },
      ],
      duplicates: 0,
      variableNames: ['name'],
    });
    const short = await accepted(`phone,name,timezone\n${P1},Ann\n`);
    assert.deepEqual(short.contacts, [{ row: 2, phone: P1, variables: { name: 'Ann' }, timezone: null }]);
  });

  it(`a variable value of ${MAX_VALUE_LENGTH} characters; not ${MAX_VALUE_LENGTH + 1} (an unnamed column is not checked)`, async () => {
    const max = 'v'.repeat(MAX_VALUE_LENGTH);
    const result = await accepted(`phone,name,,note\n${P1},${max},${max}w,x\n${P2},y,z,${max}w\n`);
    assert.deepEqual(result.contacts, [{ row: 2, phone: P1, variables: { name: max, note: 'x' }, timezone: null }]);
    assert.deepEqual(result.rejected, [{ row: 3, reason: `a value is longer than ${MAX_VALUE_LENGTH} characters` }]);
  });

  it('counts a number seen before as a duplicate, compared in E.164, the first row kept', async () => {
    const result = await accepted(`phone,name\n${P1},Ann\n+1 (555) 555-0101,Again\nbad,x\n${P2},Bob\n${P1},Third\n`);
    assert.deepEqual(result.contacts, [
      { row: 2, phone: P1, variables: { name: 'Ann' }, timezone: null },
      { row: 5, phone: P2, variables: { name: 'Bob' }, timezone: null },
    ]);
    assert.equal(result.duplicates, 2);
    assert.deepEqual(result.rejected, [{ row: 4, reason: 'not a possible phone number: bad' }]);
  });

  it('a rejected row is not a duplicate of a later valid one', async () => {
    const result = await accepted(`phone,timezone\n${P1},Nowhere/Land\n${P1},UTC\n`);
    assert.deepEqual(result.contacts, [{ row: 3, phone: P1, variables: {}, timezone: 'UTC' }]);
    assert.equal(result.duplicates, 0);
  });

  it('removes NUL characters from values', async () => {
    const result = await accepted(`phone,name\n${P1},A\u0000n\u0000n\n`);
    assert.deepEqual(result.contacts[0].variables, { name: 'Ann' });
  });
});

describe('parseContactsCsv: size limits', () => {
  it('the limits of an upload: 10 MiB, 100,000 data rows, 50 variables of 2,000 characters', () => {
    assert.deepEqual([MAX_UPLOAD_BYTES, MAX_DATA_ROWS, MAX_VARIABLES, MAX_VALUE_LENGTH], [10_485_760, 100_000, 50, 2000]);
  });

  it(`a file of ${MAX_UPLOAD_BYTES} bytes is read; one byte more is refused (413)`, async () => {
    const file = new Uint8Array(MAX_UPLOAD_BYTES).fill(0x0a);
    file.set(bytes(`phone\n${P1}\n`));
    const result = await parseContactsCsv(file, null);
    assert.ok(result.ok);
    assert.deepEqual(result.contacts, [{ row: 2, phone: P1, variables: {}, timezone: null }]);
    const over = new Uint8Array(MAX_UPLOAD_BYTES + 1).fill(0x0a);
    over.set(bytes(`phone\n${P1}\n`));
    assert.deepEqual(await parseContactsCsv(over, null), { ok: false, status: 413, message: `the file is larger than ${MAX_UPLOAD_BYTES} bytes` });
  });

  it(`${MAX_DATA_ROWS} data rows (blank rows not counted); one more is refused (413)`, async () => {
    const rows = `${P1},a\n${',b\n'.repeat(MAX_DATA_ROWS - 1)}`;
    const result = await accepted(`phone,name\n , \n${rows}\n,\n`);
    assert.equal(result.contacts.length, 1);
    assert.equal(result.rejected.length, MAX_DATA_ROWS - 1);
    assert.deepEqual(result.rejected.at(-1), { row: MAX_DATA_ROWS + 2, reason: 'no phone number' });
    assert.deepEqual(await parse(`phone,name\n${rows},c\n`), { ok: false, status: 413, message: `more than ${MAX_DATA_ROWS} data rows` });
  });
});
