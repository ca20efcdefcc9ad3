// The standalone runner's environment (docs/operating.md#configuration names): a bad value stops the start with
// a message naming the variable. An empty variable counts as unset.
import { DEFAULT_LEDGER_SECONDS } from './local-ledger.js';

export const DEFAULT_LEDGER_PORT = 4021;
export const DEFAULT_LEDGER_HOST = '127.0.0.1';
export const DEFAULT_DATA_DIR = './data';

export interface LedgerServerConfig {
  host: string;
  port: number;
  dataDir: string;
  ledgerSeconds: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function port(env: NodeJS.ProcessEnv): number {
  const raw = read(env, 'PORT');
  if (raw === undefined) return DEFAULT_LEDGER_PORT;
  const value = /^[0-9]{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 0 && value <= 65535))
    throw new ConfigError('PORT', `expected a TCP port 0–65535, got ${JSON.stringify(raw)}`);
  return value;
}

function host(env: NodeJS.ProcessEnv): string {
  const raw = read(env, 'HOST');
  if (raw === undefined) return DEFAULT_LEDGER_HOST;
  if (!/^[A-Za-z0-9.:_-]{1,253}$/.test(raw))
    throw new ConfigError('HOST', `expected a host name or IP address, got ${JSON.stringify(raw)}`);
  return raw;
}

function ledgerSeconds(env: NodeJS.ProcessEnv): number {
  const raw = read(env, 'LEDGER_SECONDS');
  if (raw === undefined) return DEFAULT_LEDGER_SECONDS;
  const value = /^[0-9]{1,6}(\.[0-9]{1,3})?$/.test(raw) ? Number(raw) : NaN;
  if (!(value > 0))
    throw new ConfigError('LEDGER_SECONDS', `expected a positive number of seconds, got ${JSON.stringify(raw)}`);
  return value;
}

export function ledgerConfigFromEnv(env: NodeJS.ProcessEnv): LedgerServerConfig {
  return {
    host: host(env),
    port: port(env),
    dataDir: read(env, 'DATA_DIR') ?? DEFAULT_DATA_DIR,
    ledgerSeconds: ledgerSeconds(env),
  };
}
