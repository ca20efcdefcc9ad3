import { describe, expect, it } from 'vitest';
import { ConfigError, defaultConnectionTotal, loadConfig } from '../src/config.js';
import { spawnSvc } from './helpers/process.js';

describe('configuration (docs/operating.md#configuration)', () => {
  it('has the spec’s defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 4020,
      HOST: '127.0.0.1',
      LEDGER: 'local',
      LEDGER_SECONDS: 5,
      DEMO: true,
      CLAIM_THRESHOLD: 1_000_000n,
      CLAIM_INTERVAL_SECONDS: 30,
      CLAIM_EXPIRY_MARGIN_LEDGERS: 120,
      VOUCHER_EXPIRY_SAFETY_LEDGERS: 60,
      MANUAL_CLAIM_MIN: 1000n,
      MANUAL_CLAIM_COOLDOWN_SECONDS: 30,
      IP_RATE_LIMIT_PER_MINUTE: 3000,
      IP_COSTLY_LIMIT_PER_MINUTE: 30,
      CHANNEL_VOUCHER_LIMIT_PER_MINUTE: 1200,
      DEPOSIT_LIMIT_PER_PAYER_PER_HOUR: 10,
      DEPOSIT_LIMIT_PER_IP_PER_HOUR: 600,
      SSE_MAX_PER_IP: 8,
      SSE_MAX_TOTAL: 200,
      STREAM_MAX_PER_CHANNEL: 4,
      STREAM_MAX_TOTAL: 1000,
      STREAM_IDLE_SECONDS: 90,
      PRICE_BOOK_PER_REQUEST: 5000n,
      PRICE_TICKER_PER_SECOND: 1000n,
      TICKER_SLICE_SECONDS: 10,
      PRICE_CHAT_PER_TOKEN: 200n,
      CHAT_SLICE_TOKENS: 50,
      RATE_LIMIT_STORE: 'memory',
      RATE_LIMIT_PREFIX: 'svc',
      FLOAT_SAMPLE_SECONDS: 60,
      DEMO_SEED: true,
      CONN_MAX_PER_IP: 128,
      CONN_IDLE_SECONDS: 10,
      SSE_STALL_SECONDS: 10,
    });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.DATA_DIR.endsWith('/data')).toBe(true);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['CLAIM_THRESHOLD', '1.5'],
    ['CLAIM_THRESHOLD', '-3'],
    ['DATABASE_URL', 'mysql://x'],
    ['DEMO', 'maybe'],
    ['LEDGER', 'mainnet'],
    ['FACILITATOR_SECRET', 'hunter2'],
    ['PUBLIC_URL', 'ftp://x'],
    ['RATE_LIMIT_STORE', 'memcached'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
    ['RATE_LIMIT_PREFIX', 'a b'],
    ['RATE_LIMIT_STORE', 'postgres'],
    ['CONN_MAX_PER_IP', '-1'],
    ['CONN_MAX_TOTAL', '0'],
    ['CONN_IDLE_SECONDS', '0'],
    ['SSE_STALL_SECONDS', 'soon'],
    ['TRUST_PROXY', 'my-proxy'],
    ['TRUST_PROXY', '10.0.0.0/33'],
  ])('refuses %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`\\b${name}\\b`));
  });

  it.each([
    ['METRICS_TOKEN', 'short-secret'],
    ['METRICS_TOKEN', 'a long secret with spaces'],
    ['DEMO_CONTROL_KEY', 'secret7'],
  ])('refuses a bad %s without repeating it: it is a credential', (name, value) => {
    let message = '';
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(new RegExp(`\\b${name}=\\(hidden\\): `));
    expect(message).not.toContain(value);
  });

  it.each([
    ['DATABASE_URL', 'mysql://svc:hunter2-password@db.example/svc'],
    ['REDIS_URL', 'http://:hunter2-password@cache.example:6379'],
  ])('refuses a bad %s without repeating the password inside it', (name, value) => {
    let message = '';
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(new RegExp(`\\b${name}=`));
    expect(message).not.toContain('hunter2');
    expect(message).toContain('***');
  });

  it('takes a METRICS_TOKEN of 16 or more visible characters', () => {
    expect(loadConfig({}).METRICS_TOKEN).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: 'a'.repeat(16) }).METRICS_TOKEN).toBe('a'.repeat(16));
  });

  it('sizes CONN_MAX_TOTAL from the open-file soft limit, leaving a quarter for files and other sockets', () => {
    const limits = (soft: string) =>
      `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                 1048576              files\n`;
    expect(defaultConnectionTotal(limits('1024'))).toBe(768);
    expect(defaultConnectionTotal(limits('256'))).toBe(192);
    expect(defaultConnectionTotal(limits('1048576'))).toBe(10_000);
    expect(defaultConnectionTotal(limits('unlimited'))).toBe(10_000);
    expect(defaultConnectionTotal(null)).toBe(768);
    expect(loadConfig({ CONN_MAX_TOTAL: '50' }).CONN_MAX_TOTAL).toBe(50);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8, 2001:db8::/32' }).TRUST_PROXY).toBe(
      'loopback, 10.0.0.0/8, 2001:db8::/32',
    );
  });

  it('svc start with a bad value exits 1 and says which variable, without a stack trace', async () => {
    const proc = spawnSvc(['start'], { PORT: 'eighty' });
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    expect(code).toBe(1);
    expect(out).toMatch(/PORT="eighty"/);
    expect(out).not.toMatch(/\n\s+at /);
  });
});

describe('LEDGER=stellar', () => {
  it('names every variable it needs that is missing', () => {
    expect(() => loadConfig({ LEDGER: 'stellar' })).toThrow(
      /STELLAR_RPC_URL: required when LEDGER=stellar[\s\S]*CHANNEL_CONTRACT_ID[\s\S]*ASSET_CONTRACT_ID[\s\S]*FACILITATOR_SECRET/,
    );
    expect(() => loadConfig({ LEDGER: 'stellar', CHANNEL_CONTRACT_ID: 'GABC' })).toThrow(
      /CHANNEL_CONTRACT_ID.*contract address/,
    );
  });

  it('accepts a complete configuration', () => {
    const c = loadConfig({
      LEDGER: 'stellar',
      STELLAR_RPC_URL: 'https://soroban-testnet.stellar.org',
      CHANNEL_CONTRACT_ID: 'CABAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAFNSZ',
      ASSET_CONTRACT_ID: 'CABAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAFNSZ',
      FACILITATOR_SECRET: '01'.repeat(32),
    });
    expect(c.LEDGER).toBe('stellar');
  });
});
