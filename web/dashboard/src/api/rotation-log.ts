import type { Rotation, RotationLog } from './refresh-guard.ts';

// The last token rotation in IndexedDB: one record, written in a transaction that has committed
// before the refresh lock is released, so the next tab to take the lock reads it (see
// refresh-guard.ts). Without IndexedDB (a private mode that refuses it) the log is empty and the
// lock alone serialises the refreshes.

const DB = 'vap-dashboard';
const STORE = 'rotations';
const KEY = 'last';

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function run<T>(mode: IDBTransactionMode, work: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  return open().then(
    (db) =>
      new Promise<T>((resolve, reject) => {
        const transaction = db.transaction(STORE, mode);
        const request = work(transaction.objectStore(STORE));
        // Resolved once the transaction has committed, not when the request succeeds.
        transaction.oncomplete = () => {
          db.close();
          resolve(request.result);
        };
        transaction.onerror = () => {
          db.close();
          reject(transaction.error);
        };
      }),
  );
}

export const indexedDbRotationLog: RotationLog = {
  last: () => run('readonly', (store) => store.get(KEY) as IDBRequest<Rotation | undefined>),
  record: async (rotation) => {
    await run('readwrite', (store) => store.put(rotation, KEY));
  },
};

/** Forgets the last rotation (sign-out). */
export function clearRotationLog(): Promise<void> {
  return run('readwrite', (store) => store.delete(KEY)).catch(() => undefined);
}
