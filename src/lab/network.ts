// The lab's private network (decision 0018 "The lab"): one namespace holding a bridge with
// 198.18.0.1/24, one namespace per host and one for the client ("the internet"), each joined to
// the bridge by a veth pair created inside the namespaces (nothing appears in this machine's own
// namespace). The only route is the default via the bridge address, which leads nowhere: no
// packet of the lab leaves it.
import { BRIDGE_ADDRESS, CLIENT_ADDRESS, SUBNET_PREFIX, type HostPlan, type Names } from './plan.js';
import { must, run } from './proc.js';
import { labHosts, record, type LabState } from './state.js';

export interface Member {
  name: string;
  netns: string;
  address: string;
}

export function members(n: Names, hosts: HostPlan[]): Member[] {
  return [
    ...hosts.map((h) => ({ name: h.name, netns: n.hostNetns(h.name), address: h.address })),
    { name: 'client', netns: n.clientNetns, address: CLIENT_ADDRESS },
  ];
}

export async function listNetns(): Promise<string[]> {
  const out = await must('ip', ['netns', 'list']);
  return out.split('\n').map((l) => l.split(' ')[0]).filter(Boolean);
}

async function addNetns(state: LabState, ns: string): Promise<void> {
  record(state, 'netns', ns);
  await must('ip', ['netns', 'add', ns]);
  await must('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
}

/** Creates the bridge namespace and every member's namespace, recording each in `state`. */
export async function createNetwork(state: LabState, n: Names): Promise<void> {
  const all = [n.bridgeNetns, ...members(n, labHosts(state)).map((m) => m.netns)];
  const taken = (await listNetns()).filter((ns) => all.includes(ns));
  if (taken.length) {
    throw new Error(`network namespaces ${taken.join(', ')} exist already, from a lab in this directory not recorded in state.json; remove them with \`ip netns del\``);
  }
  const br = n.bridgeNetns;
  await addNetns(state, br);
  await must('ip', ['-n', br, 'link', 'add', n.bridge, 'type', 'bridge']);
  await must('ip', ['-n', br, 'addr', 'add', `${BRIDGE_ADDRESS}/${SUBNET_PREFIX}`, 'dev', n.bridge]);
  await must('ip', ['-n', br, 'link', 'set', n.bridge, 'up']);
  for (const m of members(n, labHosts(state))) {
    await addNetns(state, m.netns);
    const outer = n.vethOuter(m.name);
    await must('ip', ['-n', br, 'link', 'add', outer, 'type', 'veth', 'peer', 'name', n.vethInner, 'netns', m.netns]);
    await must('ip', ['-n', br, 'link', 'set', outer, 'master', n.bridge, 'up']);
    await must('ip', ['-n', m.netns, 'addr', 'add', `${m.address}/${SUBNET_PREFIX}`, 'dev', n.vethInner]);
    await must('ip', ['-n', m.netns, 'link', 'set', n.vethInner, 'up']);
    await must('ip', ['-n', m.netns, 'route', 'add', 'default', 'via', BRIDGE_ADDRESS]);
  }
}

/**
 * Deletes the recorded namespaces that still exist (their interfaces go with them); the names
 * it removed. Call after the processes inside have ended, or the namespaces outlive their names.
 */
export async function destroyNetwork(state: LabState): Promise<string[]> {
  const existing = new Set(await listNetns());
  const removed: string[] = [];
  for (const ns of [...state.netns].reverse()) {
    if (!existing.has(ns)) continue;
    const r = await run('ip', ['netns', 'del', ns]);
    if (r.code !== 0) throw new Error(`ip netns del ${ns} failed: ${r.stderr.trim()}`);
    removed.push(ns);
  }
  return removed;
}
