import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { track } from './children.js';

export const BIN = join(import.meta.dirname, '../../bin/gatehouse.mjs');

export interface CliResult { code: number | null; stdout: string; stderr: string }

/** Runs `gatehouse ARGS` as a child process, as a person at a shell would. */
export function runCli(args: string[], env: Record<string, string>, stdin = ''): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = track(spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(stdin);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
