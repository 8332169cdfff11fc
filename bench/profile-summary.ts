/**
 * `node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top N]`:
 * where a Gatehouse child recorded with `npm run bench -- --profile DIR`
 * spent its time, by function (self and inclusive) and by package.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' } }, allowPositionals: true });
if (positionals.length !== 1) {
  console.error('usage: node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top N]');
  process.exit(2);
}
const top = Number(values.top);
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

/** `node_modules/<pkg>`, `src/…` (ours), `node:` internals, or the V8 pseudo-frames. */
function area(url: string, name: string): string {
  if (!url) return `(${name || 'anonymous'})`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  const src = /\/(src|bench)\/(.*)$/.exec(url);
  if (src) return `${src[1]}/${src[2]!.split('/').slice(0, -1).join('/') || '.'}`;
  return url.startsWith('node:') ? url : 'other';
}
const fnKey = (n: Node) => {
  const { functionName, url, lineNumber } = n.callFrame;
  const file = url.replace(/^.*\/(node_modules\/|src\/)/, '$1');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
};

const self = new Map<string, number>();
const areas = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  self.set(fnKey(n), (self.get(fnKey(n)) ?? 0) + us);
  const a = area(n.callFrame.url, n.callFrame.functionName);
  areas.set(a, (areas.get(a) ?? 0) + us);
}

// Inclusive time: each sample counts once for every distinct function on its stack.
const inclusive = new Map<string, number>();
const root = profile.nodes[0]!;
const walk = (n: Node, onStack: Set<string>): number => {
  const key = fnKey(n);
  let sum = selfUs.get(n.id) ?? 0;
  const fresh = !onStack.has(key);
  if (fresh) onStack.add(key);
  for (const c of n.children ?? []) sum += walk(byId.get(c)!, onStack);
  if (fresh) {
    onStack.delete(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + sum);
  }
  return sum;
};
walk(root, new Set());

const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * us) / totalUs).toFixed(1).padStart(6)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
  }
};
console.log(`total ${(totalUs / 1000).toFixed(0)} ms sampled`);
print('by package (self time)', areas);
print('by function (self time)', self);
print('by function (inclusive time)', inclusive);
