import type { SearchAvailablePhoneNumbersQuery } from '../../../../sdks/typescript/src/index.ts';

// The search for numbers to buy: the form's strings checked as the API checks them (country ISO
// 3166 alpha-2, area code 1–5 digits, "contains" digits) and turned into its query. Plain
// functions: unit-tested on Node (test/dashboard/knowledge-logic.test.ts).

export interface NumberSearchForm {
  country: string;
  area_code: string;
  contains: string;
}

export type NumberSearchProblems = Partial<Record<keyof NumberSearchForm, string>>;

export function numberSearchOf(form: NumberSearchForm): { query: SearchAvailablePhoneNumbersQuery; problems: NumberSearchProblems } {
  const problems: NumberSearchProblems = {};
  const query: SearchAvailablePhoneNumbersQuery = { limit: 10 };
  const country = form.country.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(country)) problems.country = 'Two letters, e.g. US.';
  else query.country = country;
  const areaCode = form.area_code.trim();
  if (areaCode !== '') {
    if (!/^\d{1,5}$/.test(areaCode)) problems.area_code = 'Up to 5 digits, e.g. 555.';
    else query.area_code = areaCode;
  }
  const contains = form.contains.replace(/[\s\-().]/g, '');
  if (contains !== '') {
    if (!/^[0-9+]{1,15}$/.test(contains)) problems.contains = 'Digits only, up to 15.';
    else query.contains = contains;
  }
  return { query, problems };
}
