// JSON typed by hand (function test arguments, metadata, test variables): the object it holds, or why not.

export function parseArguments(text: string): { value?: Record<string, unknown>; error?: string } {
  if (text.trim() === '') return { value: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { error: `Not valid JSON: ${(error as Error).message}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { error: 'Enter a JSON object, such as {"order_id": "A-1"}' };
  return { value: parsed as Record<string, unknown> };
}

/** Values for a prompt's {{variables}}: a JSON object of strings, numbers or booleans, sent as strings. */
export function variablesOf(text: string): { value?: Record<string, string>; error?: string } {
  const parsed = parseArguments(text);
  if (!parsed.value) return { error: parsed.error };
  const entries = Object.entries(parsed.value);
  const bad = entries.find(([, value]) => !['string', 'number', 'boolean'].includes(typeof value));
  if (bad) return { error: `"${bad[0]}" must be a string, a number or true/false` };
  return { value: Object.fromEntries(entries.map(([name, value]) => [name, String(value)])) };
}
