// A secret the API returned with a create, handed to the next page once (never stored).
const secrets = new Map<string, string>();

export function keepSecret(id: string, secret: string): void {
  secrets.set(id, secret);
}

export function peekSecret(id: string): string | undefined {
  return secrets.get(id);
}

export function forgetSecret(id: string): void {
  secrets.delete(id);
}
