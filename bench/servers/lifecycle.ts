/**
 * The bench keeps our stdin open: when it ends (the bench exited, even by
 * SIGKILL) or a signal arrives, this server goes too, so none is left behind.
 */
export function exitWithParent(): void {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
}
