// The lab repository served over HTTP on the bridge address (decision 0018 "The lab"): a few
// lines of node started inside the bridge namespace, serving files of one directory read-only.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BRIDGE_ADDRESS, REPO_PORT, type Names } from './plan.js';
import { LabError, procRef, run, sleep, type ProcRef } from './proc.js';
import { recordProc, type LabState } from './state.js';

// argv: directory, address, port. Names with a slash or starting with a dot are not served.
const SERVER = `
const [dir, host, port] = process.argv.slice(1);
const fs = require('node:fs'), path = require('node:path');
require('node:http').createServer((req, res) => {
  const name = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1));
  if (name.includes('/') || name.startsWith('.') || !name) { res.writeHead(404).end(); return; }
  const file = path.join(dir, name);
  fs.stat(file, (err, st) => {
    if (err || !st.isFile()) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-length': st.size });
    if (req.method === 'HEAD') res.end(); else fs.createReadStream(file).pipe(res);
  });
}).listen(Number(port), host, () => console.log('serving ' + dir + ' on ' + host + ':' + port));
`;

export function startRepoServer(state: LabState, n: Names, repo: string): ProcRef {
  const log = fs.openSync(path.join(state.dir, 'repo-server.log'), 'a');
  // `ip netns exec` execs the command: the PID is node's.
  const child = spawn('ip', ['netns', 'exec', n.bridgeNetns, process.execPath, '-e', SERVER, repo, BRIDGE_ADDRESS, String(REPO_PORT)], {
    detached: true,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  child.unref();
  if (!child.pid) throw new LabError('could not start the lab repository server');
  const ref = procRef(child.pid);
  recordProc(state, 'repo-server', ref);
  return ref;
}

/** Waits until the repository answers from inside the bridge namespace. */
export async function waitRepoServer(n: Names, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  const url = `http://${BRIDGE_ADDRESS}:${REPO_PORT}/Release`;
  for (;;) {
    const r = await run('ip', ['netns', 'exec', n.bridgeNetns, 'curl', '-sf', '-o', '/dev/null', url]);
    if (r.code === 0) return;
    if (Date.now() > until) throw new LabError(`the lab repository server does not answer at ${url}`);
    await sleep(100);
  }
}
