// SQLite's WAL checkpoints on a thread of their own (docs/decisions/0033-sqlite-checkpoint-thread.md).
// A checkpoint copies the WAL's pages into the database file and waits for the disk twice; run by
// the connection that commits (SQLite's default, every 1000 pages), it stalls the event loop and
// every request behind it for milliseconds. Here a worker thread with its own connection runs a
// PASSIVE checkpoint (never waiting for readers or writers) every CHECKPOINT_MS; the API's
// connection keeps a far larger automatic checkpoint as a safety net should the thread stop.
import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';
import { Worker } from 'node:worker_threads';

/** How often the thread checkpoints what was committed meanwhile. */
export const CHECKPOINT_MS = 200;
/** The committing connection's own automatic checkpoint, in pages: reached only if the thread falls behind or stops. */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 8000;

// CommonJS, evaluated in the thread: no loader needed, in the built server as under tsx or vitest.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
let failing = false;
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); failing = false; }
  catch (err) { if (!failing) parentPort.postMessage({ error: String((err && err.message) || err) }); failing = true; }
}, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

export interface Checkpointer {
  /** Stops the thread after its checkpoint on the way, if any. */
  stop(): Promise<void>;
}

/**
 * Starts checkpointing `database` (a file in WAL mode) on a worker thread, and moves the
 * connection's own automatic checkpoint out to FALLBACK_AUTOCHECKPOINT_PAGES; `onError` hears the
 * first checkpoint of a run of failed ones (each next one tries again; by default a process warning
 * on stderr). The thread never keeps the process alive.
 */
export function startCheckpointer(
  database: SQLite.Database,
  onError = (message: string) => process.emitWarning(`SQLite checkpoint of ${database.name} failed: ${message}`),
): Checkpointer {
  const file = database.name;
  database.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { file, driver, everyMs: CHECKPOINT_MS } });
  worker.unref();
  worker.on('message', (m: { error?: string }) => m.error && onError(m.error));
  worker.on('error', (err) => onError(err.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      // Held open until the thread has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
