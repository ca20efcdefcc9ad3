// The standalone local ledger: `svc ledger`, or `node packages/ledger/dist/main.js` (in the repository, `node --import tsx packages/ledger/src/main.ts` runs the sources).
// Environment: PORT (4021), HOST (127.0.0.1), DATA_DIR (./data), LEDGER_SECONDS (5).
import { ConfigError, ledgerConfigFromEnv } from './config.js';
import { startLedgerServer } from './server.js';

async function main(): Promise<void> {
  const config = ledgerConfigFromEnv(process.env);
  const server = await startLedgerServer({ ...config, logger: true });
  console.log(`svc ledger (stellar:local) listening on ${server.url}`);
  const stop = (): void => {
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('svc ledger: failed to close cleanly', err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(
    err instanceof ConfigError
      ? `svc ledger: invalid ${err.message}`
      : `svc ledger: failed to start: ${err instanceof Error ? err.message : String(err)}`,
  );
  process.exit(1);
});
