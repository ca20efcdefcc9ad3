// Runs `svc start` as a real child process (for crash and CLI tests).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The real `svc` command, as a user runs it.
const SVC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/svc.cjs');

export interface Child {
  proc: ChildProcess;
  url: string;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function spawnSvc(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [SVC, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Starts the facilitator and resolves once it prints its URL. */
export function startChild(env: Record<string, string>, timeoutMs = 30_000): Promise<Child> {
  const proc = spawnSvc(['start'], { PORT: '0', ...env });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`facilitator did not start:\n${out}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          proc,
          url: m[1]!,
          output: () => out,
          kill: (signal = 'SIGKILL') =>
            new Promise((done) => {
              if (proc.exitCode !== null || proc.signalCode !== null) return done();
              proc.once('exit', () => done());
              proc.kill(signal);
            }),
        });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`facilitator exited with ${code}:\n${out}`));
    });
  });
}
