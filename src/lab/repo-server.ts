// The lab repository served over HTTP on the bridge address (decision 0018 "The lab"): a few
// lines of node started inside the bridge namespace, serving files of one directory read-only.
import { inBridge, startInBridge, waitService } from './bridge.js';
import { BRIDGE_ADDRESS, REPO_PORT, type Names } from './plan.js';
import type { ProcRef } from './proc.js';
import type { LabState } from './state.js';

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
  return startInBridge(state, n, 'repo-server', [process.execPath, '-e', SERVER, repo, BRIDGE_ADDRESS, String(REPO_PORT)]);
}

/** Waits until the repository answers from inside the bridge namespace. */
export async function waitRepoServer(state: LabState, n: Names, timeoutMs = 10_000): Promise<void> {
  const url = `http://${BRIDGE_ADDRESS}:${REPO_PORT}/Release`;
  await waitService(state, 'repo-server', async () => (await inBridge(n, ['curl', '-sf', '-o', '/dev/null', url])).code === 0, timeoutMs);
}
