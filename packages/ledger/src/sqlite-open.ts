// Opening a SQLite file through better-sqlite3, whose native addon is compiled for one Node.js ABI
// (NODE_MODULE_VERSION) when it is installed. Switching Node (20 → 22 or 24, with nvm, a container
// image, a CI matrix) without reinstalling leaves the old build in node_modules, and the first
// `new Database()` — not the import: the addon loads lazily — fails with Node's own message, which
// names two ABI numbers and no command. This says what happened and the command that fixes it.
import Database from 'better-sqlite3';

/** `new Database(file, options)`, with an error that says how to rebuild a native addon built for another Node. */
export function openSqlite(file: string, options?: Database.Options): Database.Database {
  try {
    return new Database(file, options);
  } catch (err) {
    throw explainNativeAddon(err);
  }
}

/** Node's error for an addon built for another ABI, as what to do; any other error as it is. */
export function explainNativeAddon(err: unknown): unknown {
  const message = err instanceof Error ? err.message : '';
  const versions = /NODE_MODULE_VERSION (\d+)[\s\S]*NODE_MODULE_VERSION (\d+)/.exec(message);
  if ((err as { code?: unknown } | null)?.code !== 'ERR_DLOPEN_FAILED' || versions === null) return err;
  return new Error(
    `better-sqlite3's native addon was built for another Node.js (NODE_MODULE_VERSION ${versions[1]}; ` +
      `this is Node ${process.version}, which needs ${versions[2]}). Rebuild it for this Node with ` +
      '`npm rebuild better-sqlite3` in the folder where the packages are installed (in the svc ' +
      'repository: its root), then start again.',
    { cause: err },
  );
}
