import { randomBytes } from 'node:crypto';

// Small pieces shared by the fake's parts: Twilio-shaped identifiers, dates and errors, and the
// timers the fake owns (so close() can cancel every one of them).

export const API_VERSION = '2010-04-01';

/** A Twilio SID: two letters naming the resource ('CA' call, 'PN' number, 'MZ' stream) + 32 hex. */
export function newSid(prefix: string): string {
  return prefix + randomBytes(16).toString('hex');
}

/** Twilio's REST dates are RFC 2822 with a numeric zone: "Tue, 31 Aug 2010 20:36:28 +0000". */
export function rfc2822(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}

export interface TwilioErrorBody {
  code: number;
  message: string;
  more_info: string;
  status: number;
}

export function twilioError(status: number, code: number, message: string): TwilioErrorBody {
  return { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

/** "(415) 555-0100" for North American numbers, the E.164 string otherwise. */
export function friendlyName(e164: string): string {
  const nanp = /^\+1(\d{3})(\d{3})(\d{4})$/.exec(e164);
  return nanp ? `(${nanp[1]}) ${nanp[2]}-${nanp[3]}` : e164;
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: Error): void;
  settled: boolean;
}

/** A promise settled from outside; a rejection nobody awaits is not reported as unhandled. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  const handle: Deferred<T> = {
    promise,
    settled: false,
    resolve: (value) => {
      handle.settled = true;
      resolve(value);
    },
    reject: (error) => {
      handle.settled = true;
      reject(error);
    },
  };
  return handle;
}

/** Every timer of one fake, cancelled together by close(); sleeps end early then. */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();
  private readonly sleepers = new Set<() => void>();
  closed = false;

  after(ms: number, run: () => void): () => void {
    if (this.closed) return () => undefined;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      run();
    }, Math.max(0, ms));
    this.pending.add(timer);
    return () => {
      clearTimeout(timer);
      this.pending.delete(timer);
    };
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      const wake = () => {
        this.sleepers.delete(wake);
        resolve();
      };
      this.sleepers.add(wake);
      this.after(ms, wake);
    });
  }

  /** Polls `check` every few ms until it returns true (resolve) or throws (reject), for at most timeoutMs. */
  waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const poll = () => {
        try {
          if (check()) return resolve();
        } catch (error) {
          return reject(error);
        }
        if (this.closed) return reject(new Error(`fake Twilio closed while waiting for ${what}`));
        if (Date.now() >= deadline) return reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        void this.sleep(POLL_MS).then(poll);
      };
      poll();
    });
  }

  close(): void {
    this.closed = true;
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
    for (const wake of [...this.sleepers]) wake();
  }
}

const POLL_MS = 5;
