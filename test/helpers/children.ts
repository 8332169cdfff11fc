/**
 * Every process a test starts is killed when the test file's process ends,
 * whatever the test did before: a failed assertion between a spawn and its
 * stop must not leave a server running that keeps the runner (or a later
 * DROP DATABASE) waiting. The runner's --test-force-exit ends the file's
 * process once its tests are done, and this 'exit' hook runs then.
 */
import type { ChildProcess } from 'node:child_process';

/** Live children, each with whether it leads its own process group (spawned `detached`). */
const live = new Map<ChildProcess, boolean>();

process.on('exit', () => {
  for (const [child, group] of live) {
    if (child.pid === undefined) continue;
    try {
      process.kill(group ? -child.pid : child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/** Registers `child` to be killed at exit; returns it. `group`: it was spawned with `detached: true`, take its whole group. */
export function track<T extends ChildProcess>(child: T, group = false): T {
  live.set(child, group);
  child.once('exit', () => live.delete(child));
  return child;
}
