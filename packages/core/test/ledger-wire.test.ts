// The local ledger's wire (ledger-wire.ts, ledger-pool-wire.ts, ledger-ops.ts): what the ledger
// writes, its clients parse back to the same values, and writing them again gives the same bytes.
import { describe, expect, it } from 'vitest';
import {
  LEDGER_OP_ARGS,
  LedgerAccountSchema,
  LedgerChannelSchema,
  LedgerClaimManyResultSchema,
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
  receiverAuthorizer: PAYEE,
  expiryLedger: 17_280,
  refundNonce: '18446744073709551615',
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

  it('carries the refund nonce as an exact u64 decimal string and the receiver authorizer or null', () => {
    const channel = LedgerChannelSchema.parse(CHANNEL);
    expect(channel.refundNonce).toBe(2n ** 64n - 1n);
    expect(channel.receiverAuthorizer).toBe(PAYEE);
    const none = LedgerChannelSchema.parse({ ...CHANNEL, receiverAuthorizer: null, refundNonce: '0' });
    expect(channelToWire(none)).toMatchObject({ receiverAuthorizer: null, refundNonce: '0' });
    for (const refundNonce of [0, '-1', '1.5', '18446744073709551616'])
      expect(LedgerChannelSchema.safeParse({ ...CHANNEL, refundNonce }).success, String(refundNonce)).toBe(false);
    expect(LedgerChannelSchema.safeParse({ ...CHANNEL, receiverAuthorizer: undefined }).success).toBe(false);
  });

  it('parses a claim_many result: the amount each row paid, in order', () => {
    expect(LedgerClaimManyResultSchema.parse({ amounts: ['5', '170141183460469231731687303715884105727'] })).toEqual({
      amounts: [5n, 2n ** 127n - 1n],
    });
    expect(LedgerClaimManyResultSchema.safeParse({ amounts: [5] }).success).toBe(false);
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

  it('take claim_many rows and a refund with its nonce, amounts and ids as bigint', () => {
    const row = { channelId: '7', maxClaimable: '900', signature: 'AB'.repeat(64), total: '800' };
    expect(LEDGER_OP_ARGS['channel.claim_many'].parse({ claims: [row] })).toEqual({
      claims: [{ channelId: 7n, maxClaimable: 900n, signature: 'ab'.repeat(64), total: 800n }],
    });
    expect(LEDGER_OP_ARGS['channel.refund'].parse({ channelId: '7', amount: '5', nonce: '3' })).toEqual({
      channelId: 7n,
      amount: 5n,
      nonce: 3n,
    });
    const open = { payee: PAYEE, deposit: '1', voucherKey: 'ab'.repeat(32), expiryLedger: 9 };
    expect(LEDGER_OP_ARGS['channel.open'].parse({ ...open, receiverAuthorizer: PAYER }).receiverAuthorizer).toBe(PAYER);
    expect(LEDGER_OP_ARGS['channel.open'].parse(open).receiverAuthorizer).toBeUndefined();
  });

  it('refuse a receiver authorizer that is not a G… account, rows missing a field, a nonce that is not a u64 string', () => {
    const open = { payee: PAYEE, deposit: '1', voucherKey: 'ab'.repeat(32), expiryLedger: 9 };
    for (const receiverAuthorizer of [null, 'CASSET', 'GNOTANADDRESS'])
      expect(LEDGER_OP_ARGS['channel.open'].safeParse({ ...open, receiverAuthorizer }).success).toBe(false);
    const row = { channelId: '7', maxClaimable: '900', signature: 'ab'.repeat(64) };
    expect(LEDGER_OP_ARGS['channel.claim_many'].safeParse({ claims: [row] }).success).toBe(false);
    expect(
      LEDGER_OP_ARGS['channel.claim_many'].safeParse({ claims: [{ ...row, total: '1', memo: 'x' }] }).success,
    ).toBe(false);
    for (const nonce of [3, '-1', '18446744073709551616'])
      expect(LEDGER_OP_ARGS['channel.refund'].safeParse({ channelId: '7', amount: '5', nonce }).success).toBe(false);
  });

  it('refuse an unknown field, a malformed address and a channel id outside u64', () => {
    expect(LEDGER_OP_ARGS['transfer'].safeParse({ to: PAYEE, amount: '5', memo: 'x' }).success).toBe(false);
    expect(LEDGER_OP_ARGS['transfer'].safeParse({ to: 'GNOTANADDRESS', amount: '5' }).success).toBe(false);
    expect(LEDGER_OP_ARGS['channel.close'].safeParse({ channelId: '18446744073709551616' }).success).toBe(false);
  });
});
