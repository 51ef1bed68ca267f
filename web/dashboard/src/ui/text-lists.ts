// Lists typed into a textarea, one item a line: the sandbox caller's lines, allowed origins, a
// call's variables (`name=value`); and metadata typed as JSON. Plain functions, unit-tested on Node.

/** The non-empty lines, trimmed. */
export function linesOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** `name=value` lines as a record; the lines without a name before `=` are returned as bad (1-based). */
export function keyValuesOf(text: string): { values: Record<string, string>; badLines: number[] } {
  const values: Record<string, string> = {};
  const badLines: number[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const at = line.indexOf('=');
    const name = at > 0 ? line.slice(0, at).trim() : '';
    if (name === '') badLines.push(index + 1);
    else values[name] = line.slice(at + 1).trim();
  }
  return { values, badLines };
}

/** A record back as `name=value` lines. */
export const keyValuesText = (values: Record<string, string>) =>
  Object.entries(values)
    .map(([name, value]) => `${name}=${value}`)
    .join('\n');

/** A whole number in [min, max] typed as text, or undefined. */
export function wholeNumber(text: string, min: number, max: number): number | undefined {
  if (!/^\s*\d+\s*$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

/** A metadata field: empty, or a JSON object. */
export function metadataOf(text: string): { metadata?: Record<string, unknown>; error?: string } {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { metadata: value as Record<string, unknown> };
  } catch {
    // Reported below, as any value that is not an object.
  }
  return { error: 'A JSON object, e.g. {"plan": "pro"}' };
}
