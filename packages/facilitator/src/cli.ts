// svc — the command line: `svc start` (the facilitator), `svc ledger` (a standalone local ledger),
// `svc pay <url>` (pay a metered endpoint as a buyer), `svc refund <url>` (take a batch-settlement
// channel's unused deposit back), `svc backup <file>` (copy the SQLite store),
// `svc rotate-key` (a new receipt signer).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ledgerConfigFromEnv } from '@svc/ledger';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from './config.js';
import { createFacilitator } from './facilitator.js';
import { UsageError } from './cli/errors.js';
import { CONSOLE_DIST } from './http/console.js';

const USAGE = `usage: svc <command>

  start              run the facilitator (embedded ledger, SQLite, demo seller), configured by
                     environment variables: svc start --help lists them
  ledger             run a standalone local ledger (PORT, HOST, DATA_DIR, LEDGER_SECONDS)
  backup <file>      write a consistent copy of the SQLite store (DATA_DIR) while the facilitator runs
                     [--force] replaces an existing file; svc backup --help says how to restore
  rotate-key         give the facilitator a new receipt signer on purpose (its DATA_DIR and
                     DATABASE_URL; FACILITATOR_SECRET, if set, is the new key); the old signer's
                     receipts still verify, seller tokens must be fetched anew: svc rotate-key --help
  pay <url> [n]      pay a metered endpoint n times (default 1) as a buyer using a local wallet
  refund <url> [amt] take back at once the unused deposit (or amt base units) of the wallet's
                     batch-settlement channel to url's seller; what was charged is claimed first
  stream <url>       buy a paid event stream (per token or per second), printing events as they come
                     [--post JSON] sends a POST with that body (e.g. /demo/chat)
                     [--events] prints every event, payments included (not a token stream's text)
  seller init        create a seller's key (its payTo address) in SVC_SELLER (default ~/.svc/seller.json)
  seller token       get the seller's token from SVC_FACILITATOR (default http://127.0.0.1:4020),
                     for svc({ facilitator, payTo, sellerToken }) [--days N, at most 366]
  help               this text

  SVC_WALLET         the buyer's wallet for pay, refund and stream: its key and open channels
                     (default ~/.svc/wallet.json; created on first use, funded from the local ledger)
`;

/** The variables `svc ledger` reads (@svc/ledger's ledgerConfigFromEnv). */
const LEDGER_VARIABLES = ['PORT', 'HOST', 'DATA_DIR', 'LEDGER_SECONDS'] as const;

/** `svc start --help` and `svc ledger --help`: what the command does and the variables it reads. */
function serverUsage(command: 'start' | 'ledger', variables: readonly string[]): string {
  if (command === 'ledger') {
    // The ledger's own defaults, from @svc/ledger itself: not the facilitator's (its PORT is 4021).
    const d = ledgerConfigFromEnv({});
    const defaults: Record<string, string> = {
      PORT: String(d.port),
      HOST: d.host,
      DATA_DIR: d.dataDir,
      LEDGER_SECONDS: String(d.ledgerSeconds),
    };
    const width = Math.max(...variables.map((name) => name.length)) + 2;
    return `usage: [VARIABLE=value …] svc ledger

Runs a standalone local ledger.
It takes no arguments. It reads these environment variables, shown with their defaults (the
ledger's own, not the facilitator's):

${variables.map((name) => `  ${name.padEnd(width)}${defaults[name] ?? ''}`.trimEnd()).join('\n')}
`;
  }
  const lines: string[] = [];
  for (const name of variables) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last]!.length + name.length + 2 <= 96) lines[last] += `, ${name}`;
    else lines.push(`  ${name}`);
  }
  return `usage: [VARIABLE=value …] svc start

Runs the facilitator: by default with the embedded ledger, SQLite and the demo seller.
It takes no arguments. It reads these environment variables (the Configuration table of
@svc/facilitator's README gives each one's meaning and default: node_modules/@svc/facilitator/README.md
where the package is installed, packages/facilitator/README.md in the repository):

${lines.join(',\n')}
`;
}

/**
 * `start` and `ledger` are configured by environment variables only; an argument used to be ignored
 * (`svc start --help` started a facilitator, `svc start --port 4099` one on port 4020). Returns
 * whether to print the usage instead of running; throws UsageError on anything else, naming the
 * variable to set when a flag matches one (`--data-dir=/x` → `DATA_DIR=/x svc start`).
 */
function helpOnly(command: 'start' | 'ledger', args: readonly string[], variables: readonly string[]): boolean {
  if (args.length === 0) return false;
  if (args.length === 1 && ['--help', '-h', 'help'].includes(args[0]!)) return true;
  const flag = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/i.exec(args[0]!);
  const name = flag ? flag[1]!.replace(/-/g, '_').toUpperCase() : null;
  const value = flag ? (flag[2] ?? (args[1]?.startsWith('-') ? undefined : args[1])) : undefined;
  const hint =
    name !== null && variables.includes(name)
      ? ` Set ${name} in the environment instead: ${name}=${shellWord(value ?? '…')} svc ${command}`
      : '';
  throw new UsageError(
    `${command} takes no arguments (got ${JSON.stringify(args.join(' ').slice(0, 200))}): it is configured by environment variables.${hint}\n\n${serverUsage(command, variables)}`,
  );
}

/** A value as one word of a POSIX shell command line. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./…-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}

/** Run from the repository (whose root has `npm run svc`), not from an installed package (`npx svc`). */
const IN_REPOSITORY = fs.existsSync(fileURLToPath(new URL('../../../scripts/build.mjs', import.meta.url)));

/** The longest a SIGTERM or SIGINT shutdown may take before the process exits regardless. */
const SHUTDOWN_LIMIT_MS = 10_000;

async function start(): Promise<void> {
  const config = loadConfig();
  const facilitator = await createFacilitator({ config });
  const url = await facilitator.listen();
  const services = facilitator.services;
  console.log(`svc facilitator listening on ${url}`);
  console.log(
    `  network   ${services.ledgerInfo.network} (${services.config.LEDGER_URL ? `ledger at ${services.config.LEDGER_URL}` : 'embedded local ledger'}, ledger every ${services.ledgerInfo.ledgerSeconds} s)`,
  );
  console.log(`  store     ${services.store.kind === 'sqlite' ? `SQLite in ${config.DATA_DIR}` : 'PostgreSQL'}`);
  console.log(`  signer    ${services.keys.address}`);
  console.log(
    `  console   ${fs.existsSync(path.join(CONSOLE_DIST, 'index.html')) ? `${url}/` : 'not built (npm run build)'}`,
  );
  if (facilitator.demoPayTo)
    console.log(
      `  demo      GET ${url}/demo/book (${config.PRICE_BOOK_PER_REQUEST} base units per request), paying ${facilitator.demoPayTo}`,
    );
  console.log(`  try       ${IN_REPOSITORY ? 'npm run svc --' : 'npx svc'} pay ${url}/demo/book`);
  const stop = (signal: string) => {
    console.log(`\n${signal}: shutting down`);
    // Nothing unacknowledged is lost by leaving (a write not committed was never acknowledged), so
    // a shutdown that waits on a database that does not answer ends anyway.
    setTimeout(() => {
      console.error(
        `svc: shutdown took over ${SHUTDOWN_LIMIT_MS / 1000} s (the database or the ledger does not answer); exiting`,
      );
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    facilitator.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

async function ledger(): Promise<void> {
  const { ledgerConfigFromEnv, startLedgerServer } = await import('@svc/ledger');
  const server = await startLedgerServer({ ...ledgerConfigFromEnv(process.env), logger: true });
  console.log(`svc ledger (stellar:local) listening on ${server.url}`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      if (helpOnly('start', rest, CONFIG_VARIABLES)) return void console.log(serverUsage('start', CONFIG_VARIABLES));
      return start();
    case 'ledger':
      if (helpOnly('ledger', rest, LEDGER_VARIABLES)) return void console.log(serverUsage('ledger', LEDGER_VARIABLES));
      return ledger();
    case 'backup': {
      const { backupCommand } = await import('./cli/backup.js');
      return backupCommand(rest);
    }
    case 'rotate-key': {
      const { rotateKeyCommand } = await import('./cli/rotate-key.js');
      return rotateKeyCommand(rest);
    }
    case 'pay': {
      const { payCommand } = await import('./cli/pay.js');
      return payCommand(rest);
    }
    case 'refund': {
      const { refundCommand } = await import('./cli/refund.js');
      return refundCommand(rest);
    }
    case 'seller': {
      const { sellerCommand } = await import('@svc/meter');
      return sellerCommand(rest);
    }
    case 'stream': {
      const { streamCommand } = await import('./cli/stream.js');
      return streamCommand(rest);
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      console.error(`svc: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  // A configuration mistake is the user's to fix: say what is wrong, no stack trace.
  if (err instanceof ConfigError) console.error(`svc: ${err.message}`);
  else console.error(`svc: ${(err as Error).message ?? String(err)}`);
  // A command line svc does not take (UsageError, or @svc/meter's seller command's) exits 2.
  const code = (err as { exitCode?: unknown }).exitCode;
  process.exitCode = typeof code === 'number' ? code : 1;
});
