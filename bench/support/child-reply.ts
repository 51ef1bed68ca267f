import type { ChildProcess } from 'node:child_process';

/**
 * A forked child's next message, after sending it `message` if one is given. Rejects when the child
 * fails to be spawned or exits first (a server that crashed answers nothing: the bench stops
 * instead of waiting for ever).
 */
export function childReply<T>(child: ChildProcess, message?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => settle(() => reject(new Error(`server exited (${code})`)));
    const failed = (error: Error) => settle(() => reject(error));
    const answered = (answer: unknown) => settle(() => resolve(answer as T));
    function settle(then: () => void) {
      child.off('exit', exited);
      child.off('error', failed);
      child.off('message', answered);
      then();
    }
    child.once('exit', exited);
    child.once('error', failed);
    child.once('message', answered);
    if (message) child.send(message);
  });
}
