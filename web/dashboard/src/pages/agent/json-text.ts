// JSON typed by hand (function test arguments, chat variables): the object it holds, or why not.

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
