// A PostgreSQL server of the test's own (initdb in a temporary folder, a random port), so a test
// can stop and restart the database under a running cluster without touching the shared server
// other tests use. Uses the machine's PostgreSQL binaries (Debian's postgresql package); as root,
// the server runs as the postgres user, which PostgreSQL requires.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PrivatePg {
  url: string;
  port: number;
  start(): void;
  /** `fast`: the server ends every session (57P01) and shuts down; `immediate`: as if it crashed. */
  stop(mode?: 'fast' | 'immediate'): void;
  destroy(): void;
}

/** The newest installed server's bin folder, or null. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export interface PrivatePgOptions {
  /**
   * The server's default synchronous_commit (default on). `off` acknowledges a commit before its
   * WAL reaches the OS, so a crash loses the last ones: a server configured for speed, which the
   * facilitator must not trust with its money writes.
   */
  synchronousCommit?: 'on' | 'off';
}

export async function startPrivatePostgres(o: PrivatePgOptions = {}): Promise<PrivatePg> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (Debian package postgresql)');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pg-'));
  const data = path.join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['postgres:postgres', root]);
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]]
      : [path.join(bin, cmd), args];
    const out = spawnSync(file, argv, { encoding: 'utf8', cwd: root });
    if (out.status !== 0)
      throw new Error(`${cmd} ${args.join(' ')} failed (${out.status}):\n${out.stdout}\n${out.stderr}`);
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const port = await freePort();
  // fsync = off: the tests crash the server, never the machine, so what reached the OS survives.
  // synchronous_commit on (by default): a commit is acknowledged only once its WAL reached the OS,
  // so a crash (stop -m immediate) keeps every commit the server acknowledged.
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=${o.synchronousCommit ?? 'on'} -c full_page_writes=off -c max_connections=200`;
  const start = () =>
    run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(root, 'server.log'), '-w', '-t', '30', 'start']);
  const stop = (mode: 'fast' | 'immediate' = 'fast') =>
    run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    destroy() {
      try {
        stop('immediate');
      } catch {
        // already stopped
      }
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
