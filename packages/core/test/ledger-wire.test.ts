// The local ledger's wire (ledger-wire.ts, ledger-pool-wire.ts, ledger-ops.ts): what the ledger
// writes, its clients parse back to the same values, and writing them again gives the same bytes.
import { describe, expect, it } from 'vitest';
import {
  LEDGER_OP_ARGS,
  LedgerAccountSchema,
  LedgerChannelSchema,
  PoolStateSchema,
  accountToWire,
  channelToWire,
  policyToWire,
  poolToWire,
  randomKeypair,
} from '@svc/core';
import type { AccountPolicy, LedgerAccountWire, LedgerChannelWire, PoolStateWire } from '@svc/core';

const PAYER = randomKeypair().address;
const PAYEE = randomKeypair().address;

const CHANNEL: LedgerChannelWire = {
  id: '18446744073709551615',
  payer: PAYER,
  payee: PAYEE,
  asset: 'CASSET',
  deposit: '170141183460469231731687303715884105727',
  claimed: '5000',
  voucherKey: 'ab'.repeat(32),
  expiryLedger: 17_280,
  open: true,
};

const SMART_ACCOUNT: LedgerAccountWire = {
  address: 'CACCOUNT',
  seq: 3,
  balances: [{ asset: 'CASSET', amount: '10000000' }],
  account: {
    owner: PAYER,
    policy: { agentKey: PAYEE, perTxCap: '10000000', dailyCap: '50000000', payees: [PAYEE], expiresLedger: 99 },
    frozen: false,
    spentToday: '0',
    day: '2026-11-24',
  },
};

const POOL: PoolStateWire = {
  address: 'CPOOL',
  size: '1000',
  idle: '600',
  lent: '400',
  totalShares: '1000',
  sharePrice: '10000000',
  utilizationBps: 4000,
  liquidationThresholdBps: 11000,
  lines: [
    {
      account: 'CACCOUNT',
      debt: '404',
      value: '800',
      healthBps: 19801,
      liquidatable: false,
      openedAt: '2026-11-24T00:00:00.000Z',
    },
  ],
  positions: [{ address: PAYER, shares: '1000', value: '1000' }],
};

describe('the ledger wire', () => {
  it('parses amounts and channel ids to bigint and writes the same bytes back', () => {
    const channel = LedgerChannelSchema.parse(CHANNEL);
    expect(channel.id).toBe(2n ** 64n - 1n);
    expect(channel.deposit).toBe(2n ** 127n - 1n);
    expect(JSON.stringify(channelToWire(channel))).toBe(JSON.stringify(CHANNEL));
  });

  it('round-trips a smart account with its policy, key order included', () => {
    const account = LedgerAccountSchema.parse(SMART_ACCOUNT);
    expect(account.account?.policy?.dailyCap).toBe(50_000_000n);
    expect(JSON.stringify(accountToWire(account))).toBe(JSON.stringify(SMART_ACCOUNT));
  });

  it('round-trips the credit pool, basis points as numbers', () => {
    const pool = PoolStateSchema.parse(POOL);
    expect(pool.lines[0]?.debt).toBe(404n);
    expect(JSON.stringify(poolToWire(pool))).toBe(JSON.stringify(POOL));
  });

  it('refuses a channel id outside u64', () => {
    expect(LedgerChannelSchema.safeParse({ ...CHANNEL, id: '18446744073709551616' }).success).toBe(false);
  });

  it('writes a policy as exactly the five fields an op takes, caps as decimal strings', () => {
    const policy = {
      agentKey: PAYEE,
      perTxCap: 1n,
      dailyCap: 2n,
      payees: [PAYEE],
      expiresLedger: 9,
      extra: 'x',
    } as AccountPolicy;
    expect(policyToWire(policy)).toStrictEqual({
      agentKey: PAYEE,
      perTxCap: '1',
      dailyCap: '2',
      payees: [PAYEE],
      expiresLedger: 9,
    });
    expect(policyToWire(null)).toBeNull();
  });
});

describe('the ledger ops args', () => {
  it('accept what a client writes and parse amounts to bigint', () => {
    expect(LEDGER_OP_ARGS['transfer'].parse({ to: PAYEE, amount: '-5' }).amount).toBe(-5n);
    const policy = policyToWire({ agentKey: PAYEE, perTxCap: 1n, dailyCap: 2n, payees: [PAYEE], expiresLedger: 9 });
    expect(LEDGER_OP_ARGS['account.create'].parse({ owner: PAYER, policy }).policy?.perTxCap).toBe(1n);
  });

  it('refuse an unknown field, a malformed address and a channel id outside u64', () => {
    expect(LEDGER_OP_ARGS['transfer'].safeParse({ to: PAYEE, amount: '5', memo: 'x' }).success).toBe(false);
    expect(LEDGER_OP_ARGS['transfer'].safeParse({ to: 'GNOTANADDRESS', amount: '5' }).success).toBe(false);
    expect(LEDGER_OP_ARGS['channel.close'].safeParse({ channelId: '18446744073709551616' }).success).toBe(false);
  });
});
