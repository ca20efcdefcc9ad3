// Configuration from environment variables (docs/operating.md#configuration), each with the spec's default. A bad
// value stops the start with a message naming the variable.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { isContractAddress, parseUnits } from '@svc/core';
import { isTrustProxyValue } from './http/limits/trust-proxy.js';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const units = z.string().transform((v, ctx) => {
  try {
    return parseUnits(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a whole number of base units' });
    return z.NEVER;
  }
});
/** Variables whose value a configuration error never repeats: they are credentials. */
const SECRET_VARIABLES = new Set(['DEMO_CONTROL_KEY', 'METRICS_TOKEN']);
const flag = z
  .enum(['1', '0', 'true', 'false', 'on', 'off', 'yes', 'no'])
  .transform((v) => ['1', 'true', 'on', 'yes'].includes(v));

const SCHEMA = z.object({
  PORT: int(0, 65535).default(4020),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL (leave it unset for SQLite)')
    .optional(),
  /** PostgreSQL lock_timeout: how long a write waits for a lock before it fails with 503. */
  PG_LOCK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  LEDGER: z.enum(['local', 'stellar']).default('local'),
  STELLAR_RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
  CHANNEL_CONTRACT_ID: z.string().refine(isContractAddress, 'must be a contract address (C…)').optional(),
  ASSET_CONTRACT_ID: z.string().refine(isContractAddress, 'must be a contract address (C…)').optional(),
  STELLAR_START_LEDGER: int(1, 4_294_967_295).optional(),
  LEDGER_URL: z.url({ protocol: /^https?$/ }).optional(),
  LEDGER_SECONDS: z.coerce.number().positive().max(3600).default(5),
  FACILITATOR_SECRET: z.string().optional(),
  DEMO: flag.default(true),
  DEMO_SEED: flag.default(true),
  DEMO_CONTROL_KEY: z.string().min(8).optional(),
  CORS_ORIGINS: z.string().default('*'),
  MCP_ALLOWED_ORIGINS: z.string().max(4096).default(''),
  TRUST_PROXY: z
    .string()
    .refine(
      isTrustProxyValue,
      'must be empty, true, false, a hop count, or addresses/CIDRs (and loopback, linklocal, uniquelocal), comma-separated',
    )
    .default(''),
  /** Unset: GET /metrics answers 404; set: it needs `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,256}$/, 'must be 16–256 visible ASCII characters, no spaces (e.g. `openssl rand -hex 24`)')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CLAIM_THRESHOLD: units.default(1_000_000n),
  CLAIM_INTERVAL_SECONDS: z.coerce.number().positive().max(86_400).default(30),
  CLAIM_EXPIRY_MARGIN_LEDGERS: int(0, 1_000_000).default(120),
  VOUCHER_EXPIRY_SAFETY_LEDGERS: int(0, 1_000_000).default(60),
  MANUAL_CLAIM_MIN: units.default(1000n),
  MANUAL_CLAIM_COOLDOWN_SECONDS: z.coerce.number().min(0).max(86_400).default(30),
  IP_RATE_LIMIT_PER_MINUTE: int(0, 10_000_000).default(3000),
  IP_COSTLY_LIMIT_PER_MINUTE: int(0, 10_000_000).default(30),
  CHANNEL_VOUCHER_LIMIT_PER_MINUTE: int(1, 10_000_000).default(1200),
  DEPOSIT_LIMIT_PER_PAYER_PER_HOUR: int(0, 1_000_000).default(10),
  DEPOSIT_LIMIT_PER_IP_PER_HOUR: int(0, 1_000_000).default(600),
  RATE_LIMIT_STORE: z.enum(['memory', 'redis', 'postgres']).default('memory'),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).default('redis://127.0.0.1:6379'),
  RATE_LIMIT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,32}$/, 'must be 1–32 of [A-Za-z0-9_.-]')
    .default('svc'),
  CONN_MAX_PER_IP: int(0, 1_000_000).default(128),
  CONN_MAX_TOTAL: int(1, 1_000_000).default(defaultConnectionTotal()),
  CONN_IDLE_SECONDS: z.coerce.number().positive().max(3600).default(10),
  SSE_MAX_PER_IP: int(1, 100_000).default(8),
  SSE_MAX_TOTAL: int(1, 1_000_000).default(200),
  SSE_STALL_SECONDS: z.coerce.number().positive().max(3600).default(10),
  STREAM_MAX_PER_CHANNEL: int(1, 1000).default(4),
  STREAM_MAX_TOTAL: int(1, 1_000_000).default(1000),
  STREAM_MAX_PER_PAYER: int(1, 1_000_000).default(16),
  STREAM_MAX_PER_PAYEE: int(1, 1_000_000).default(250),
  STREAM_IDLE_SECONDS: z.coerce.number().positive().max(86_400).default(90),
  PRICE_BOOK_PER_REQUEST: units.default(5000n),
  PRICE_TICKER_PER_SECOND: units.default(1000n),
  TICKER_SLICE_SECONDS: int(1, 3600).default(10),
  PRICE_CHAT_PER_TOKEN: units.default(200n),
  CHAT_SLICE_TOKENS: int(1, 100_000).default(50),
  FLOAT_SAMPLE_SECONDS: z.coerce.number().positive().max(86_400).default(60),
});

export type Config = z.infer<typeof SCHEMA> & { DATA_DIR: string };

/** The environment variables the facilitator reads, in the order the schema lists them. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(SCHEMA.shape);

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A value as an error may repeat it: the password of anything shaped like a URL with credentials
 *  (`scheme://user:password@host`) becomes `***`, even when the URL is otherwise invalid. */
function withoutPassword(value: string): string {
  return value.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/@:]*:)[^/@]*@/, '$1***@');
}

/** Reads the configuration; `env` defaults to process.env. Throws ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.fromEntries(
    Object.keys(SCHEMA.shape)
      .map((k) => [k, env[k] === '' ? undefined : env[k]] as const)
      .filter(([, v]) => v !== undefined),
  );
  const parsed = SCHEMA.safeParse(known);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? '?');
      const shown = SECRET_VARIABLES.has(name) ? '(hidden)' : JSON.stringify(withoutPassword(known[name] ?? ''));
      return `  ${name}=${shown}: ${i.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const config = { ...parsed.data, DATA_DIR: path.resolve(parsed.data.DATA_DIR) };
  if (config.FACILITATOR_SECRET !== undefined && !/^(S[A-Z2-7]{55}|[0-9a-fA-F]{64})$/.test(config.FACILITATOR_SECRET)) {
    throw new ConfigError(
      'invalid configuration:\n  FACILITATOR_SECRET: must be an S… secret seed or 64 hex characters',
    );
  }
  if (config.RATE_LIMIT_STORE === 'postgres' && config.DATABASE_URL === undefined) {
    throw new ConfigError(
      'invalid configuration:\n  RATE_LIMIT_STORE: "postgres" keeps the counters in the DATABASE_URL database; set DATABASE_URL',
    );
  }
  if (config.LEDGER === 'stellar') {
    const missing = (
      ['STELLAR_RPC_URL', 'CHANNEL_CONTRACT_ID', 'ASSET_CONTRACT_ID', 'FACILITATOR_SECRET'] as const
    ).filter((k) => config[k] === undefined);
    if (missing.length)
      throw new ConfigError(
        `invalid configuration:\n${missing.map((k) => `  ${k}: required when LEDGER=stellar`).join('\n')}`,
      );
  }
  return config;
}

/**
 * CONN_MAX_TOTAL's default: three quarters of the open-file soft limit (768 of the usual 1,024),
 * leaving the rest to the store's and the ledger's files, database and Redis connections, the
 * demo seller's own client sockets and the answers to refused connections; at most 10,000; 768
 * where the limit cannot be read (not Linux).
 */
export function defaultConnectionTotal(limits = readLimits()): number {
  const soft = /^Max open files\s+(\d+|unlimited)\s/m.exec(limits ?? '')?.[1];
  if (soft === undefined) return 768;
  return soft === 'unlimited' ? 10_000 : Math.max(16, Math.min(10_000, Math.floor((Number(soft) * 3) / 4)));
}

function readLimits(): string | null {
  try {
    return fs.readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return null;
  }
}

/** The documented defaults, for the README and llms.txt. */
export function configDefaults(): Config {
  return loadConfig({});
}
