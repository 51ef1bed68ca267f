// The secrets no log line may hold. Every test app (test/support/app.ts) and the servers the suite
// spawns write their log lines into TEST_COVERAGE_DIR as `logs-<pid>….txt`; test/log-secrets.check.ts,
// run after the suite, scans them all with findLogSecrets.

export const LOGS_FILE = /^logs-\d+(?:-[\w-]+)?\.txt$/;

/** The log file of a test process, or of a server it spawned (`tag`). */
export function logFileName(pid: number, tag?: string): string {
  return `logs-${pid}${tag ? `-${tag}` : ''}.txt`;
}

/** Passwords the fixtures and tests use that no ordinary log text would contain. */
const FIXTURE_PASSWORDS = [
  'correct horse battery', // test/support/fixtures.ts signUp default
  'persisted password',
  'a brand new password',
  'another password',
  'not my password',
  'reset password 1',
  'reset password 2',
];

const SECRETS: Array<{ what: string; pattern: RegExp }> = [
  { what: 'argon2 hash', pattern: /\$argon2(?:id|i|d)\$/ },
  { what: 'webhook secret (whsec_)', pattern: /whsec_[A-Za-z0-9+/]{16,}/ },
  { what: 'API key (sk_)', pattern: /(?<![0-9A-Za-z])sk_[0-9A-Za-z]{46}(?![0-9A-Za-z])/ },
  { what: 'refresh token (rt_)', pattern: /(?<![0-9A-Za-z])rt_[A-Za-z0-9_-]{43}/ },
  { what: 'mailed token (ev_, pr_, iv_)', pattern: /(?<![0-9A-Za-z])(?:ev|pr|iv)_[A-Za-z0-9_-]{43}/ },
  { what: 'JWT', pattern: /eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/ },
  // A SHA-256 key or token hash in SQL parameter context: a query's parameter list, the key a
  // PostgreSQL detail quotes (`Key (key_hash)=(…)`), or a *_hash field.
  {
    what: 'SHA-256 hash value',
    pattern: /"(?:params|parameters|bindings)":\[[^\]]{0,2000}?"[0-9a-f]{64}"|=\((?:[^)]{0,300}?, )?[0-9a-f]{64}[,)]|"\w{0,40}hash":"[0-9a-f]{64}"/,
  },
  { what: 'fixture password', pattern: new RegExp(FIXTURE_PASSWORDS.join('|')) },
  { what: 'fixture email address', pattern: /(?<![\w.+-])[\w.+-]+@example\.(?:com|org|net)/ },
];

// Every pattern runs in time linear in the line: the suite logs URLs of hostile requests that are
// hundreds of kilobytes long (no unbounded `x*` before a literal that a long run could fail).

/** What a log line leaks (names of the findings, never the secret itself). */
export function findLogSecrets(line: string): string[] {
  return SECRETS.filter(({ pattern }) => pattern.test(line)).map(({ what }) => what);
}
