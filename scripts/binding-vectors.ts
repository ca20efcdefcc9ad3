// The test vectors of the Stellar binding of x402 `batch-settlement`
// (docs/schemes/scheme_batch_settlement_stellar.md), made with svc's own code from fixed keys, as
// plain JSON that another implementation can run: network ids, keys, channel ids, voucher
// messages, digests and signatures, strict ed25519 verification cases, a voucher payload, and
// corrective-402 cases with the outcome a client must reach.
//
//   node scripts/build.mjs && node scripts/launch.cjs scripts/binding-vectors.ts   (rewrites the file)
//
// packages/core/test/binding-vectors.test.ts checks that the committed file is exactly what this
// builds, and checks every vector against svc's code; packages/x402/test/binding-vectors.test.ts
// runs the corrective cases through the buyer's scheme client. The outcomes of the corrective cases
// are written here by hand from the binding's rules, not computed by the client they test.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CHANNEL_ID_DOMAIN,
  NETWORKS,
  batchTermsOf,
  channelIdOf,
  concatBytes,
  contractFromRaw,
  formatUnits,
  keypairFromSeed,
  networkId,
  sha256,
  toHex,
  utf8,
  voucherContext,
} from '@svc/core';
import type { BatchPayload, BatchRequirements, ChannelState, Keypair, PaymentRequirements } from '@svc/core';

export const VECTORS_FILE = 'docs/schemes/scheme_batch_settlement_stellar.vectors.json';

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const I128_MAX = (1n << 127n) - 1n;
const U64_MAX = (1n << 64n) - 1n;

const filled = (byte: number) => new Uint8Array(32).fill(byte);
const seedHex = (byte: number) => toHex(filled(byte));

/** The fixed keys: 32-byte seeds of one repeated byte. */
const SEEDS = {
  voucherKey: 0x01,
  otherVoucherKey: 0x02,
  receiverAuthorizer: 0x03,
  payTo: 0x04,
  payer: 0x05,
} as const;
const CONTRACT_RAW = filled(0x02);
const ASSET_RAW = filled(0x03);

function key(byte: number): Keypair {
  return keypairFromSeed(filled(byte));
}

function littleEndian32(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}

function readLittleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

function networksSection() {
  return Object.entries(NETWORKS).map(([network, { passphrase }]) => ({
    network,
    networkPassphrase: passphrase,
    networkIdHex: toHex(networkId(passphrase)),
  }));
}

function keysSection() {
  return Object.entries(SEEDS).map(([role, byte]) => {
    const k = key(byte);
    return { role, seedHex: seedHex(byte), publicKeyHex: k.publicKeyHex, address: k.address };
  });
}

function channelIdsSection() {
  const out = [];
  for (const [network, { passphrase }] of Object.entries(NETWORKS)) {
    for (const byte of [SEEDS.voucherKey, SEEDS.otherVoucherKey]) {
      const voucherKey = key(byte).publicKey;
      const preimage = concatBytes(utf8(CHANNEL_ID_DOMAIN), networkId(passphrase), CONTRACT_RAW, voucherKey);
      out.push({
        network,
        networkPassphrase: passphrase,
        channelContract: contractFromRaw(CONTRACT_RAW),
        channelContractRawHex: toHex(CONTRACT_RAW),
        voucherPublicKeyHex: toHex(voucherKey),
        preimageHex: toHex(preimage),
        digestHex: toHex(sha256(preimage)),
        channelId: channelIdOf(passphrase, CONTRACT_RAW, voucherKey).toString(),
      });
    }
  }
  return out;
}

function voucherVector(network: keyof typeof NETWORKS, channelId: bigint, amount: bigint, note: string) {
  const passphrase = NETWORKS[network].passphrase;
  const ctx = voucherContext(passphrase, CONTRACT_RAW);
  const signer = key(SEEDS.voucherKey);
  return {
    note,
    network,
    networkPassphrase: passphrase,
    channelContractRawHex: toHex(CONTRACT_RAW),
    channelId: channelId.toString(),
    maxClaimableAmount: amount.toString(),
    voucherSeedHex: seedHex(SEEDS.voucherKey),
    voucherPublicKeyHex: signer.publicKeyHex,
    messageHex: toHex(ctx.message(channelId, amount)),
    digestHex: toHex(ctx.hash(channelId, amount)),
    signatureHex: toHex(ctx.sign(signer, channelId, amount)),
  };
}

function vouchersSection() {
  const localId = channelIdOf(NETWORKS['stellar:local'].passphrase, CONTRACT_RAW, key(SEEDS.voucherKey).publicKey);
  const testnetId = channelIdOf(NETWORKS['stellar:testnet'].passphrase, CONTRACT_RAW, key(SEEDS.voucherKey).publicKey);
  return [
    voucherVector('stellar:local', localId, 5000n, 'the first voucher of a channel: price 5000, nothing charged'),
    voucherVector('stellar:testnet', testnetId, 135000n, 'the derived channel id on testnet'),
    voucherVector(
      'stellar:testnet',
      42n,
      135000n,
      'channel 42: the vector of packages/ledger/docs/channel-contract.md',
    ),
    voucherVector('stellar:local', localId, 0n, 'a ceiling of 0 (a refund voucher of a channel never charged)'),
    voucherVector('stellar:local', U64_MAX, I128_MAX, 'the largest channel id (u64) and the largest amount (i128)'),
  ];
}

function strictSection() {
  const passphrase = NETWORKS['stellar:local'].passphrase;
  const ctx = voucherContext(passphrase, CONTRACT_RAW);
  const signer = key(SEEDS.voucherKey);
  const other = key(SEEDS.otherVoucherKey);
  const channelId = 7n;
  const amount = 5000n;
  const digest = ctx.hash(channelId, amount);
  const good = ctx.sign(signer, channelId, amount);
  const base = { digestHex: toHex(digest) };
  const s = readLittleEndian(good.subarray(32));
  const nonCanonicalS = concatBytes(good.subarray(0, 32), littleEndian32(s + L));
  const flipped = Uint8Array.from(good);
  flipped[10] = flipped[10]! ^ 0x01;
  const identity = littleEndian32(1n); // y = 1: the neutral element, of order 1
  const zeroS = new Uint8Array(32);
  // y = p + 1 ≡ 1: the identity again, encoded non-canonically (y ≥ p).
  const identityNonCanonical = littleEndian32((1n << 255n) - 19n + 1n);
  const smallOrderR = concatBytes(identity, good.subarray(32));
  return [
    { name: 'valid', ...base, publicKeyHex: signer.publicKeyHex, signatureHex: toHex(good), valid: true },
    {
      name: 'non_canonical_s',
      why: 'S + L in place of S: the same point equation, but S ≥ L (verify_strict refuses it)',
      ...base,
      publicKeyHex: signer.publicKeyHex,
      signatureHex: toHex(nonCanonicalS),
      valid: false,
    },
    {
      name: 'small_order_key',
      why: 'A = the identity, R = the identity, S = 0: a cofactorless verifier accepts it for every message',
      ...base,
      publicKeyHex: toHex(identity),
      signatureHex: toHex(concatBytes(identity, zeroS)),
      valid: false,
    },
    {
      name: 'non_canonical_key',
      why: 'A encoded with y ≥ p (the identity as y = p + 1)',
      ...base,
      publicKeyHex: toHex(identityNonCanonical),
      signatureHex: toHex(concatBytes(identity, zeroS)),
      valid: false,
    },
    {
      name: 'small_order_r',
      why: 'R = the identity with the valid signature’s S',
      ...base,
      publicKeyHex: signer.publicKeyHex,
      signatureHex: toHex(smallOrderR),
      valid: false,
    },
    {
      name: 'other_key',
      why: 'a valid signature of the same digest by another key',
      ...base,
      publicKeyHex: signer.publicKeyHex,
      signatureHex: toHex(ctx.sign(other, channelId, amount)),
      valid: false,
    },
    {
      name: 'other_amount',
      why: 'the valid signature checked against the digest of another amount (5001)',
      digestHex: toHex(ctx.hash(channelId, amount + 1n)),
      publicKeyHex: signer.publicKeyHex,
      signatureHex: toHex(good),
      valid: false,
    },
    {
      name: 'bit_flipped',
      why: 'one bit of R changed',
      ...base,
      publicKeyHex: signer.publicKeyHex,
      signatureHex: toHex(flipped),
      valid: false,
    },
  ];
}

/** The terms the payload and corrective cases use: price 5000 per request, on stellar:local. */
function requirementsOf(): BatchRequirements {
  const channelTerms: PaymentRequirements = {
    scheme: 'channel',
    network: 'stellar:local',
    asset: contractFromRaw(ASSET_RAW),
    payTo: key(SEEDS.payTo).address,
    amount: '5000',
    unit: 'request',
    maxTimeoutSeconds: 60,
    extra: {
      channelContract: contractFromRaw(CONTRACT_RAW),
      minDeposit: '5000000',
      facilitator: 'https://facilitator.example',
      areFeesSponsored: true,
    },
  };
  return batchTermsOf(channelTerms, key(SEEDS.receiverAuthorizer).address);
}

function payloadSection(requirements: BatchRequirements) {
  const passphrase = NETWORKS['stellar:local'].passphrase;
  const ctx = voucherContext(passphrase, CONTRACT_RAW);
  const channelId = channelIdOf(passphrase, CONTRACT_RAW, key(SEEDS.voucherKey).publicKey);
  const payload: BatchPayload = {
    type: 'voucher',
    voucher: {
      channelId: channelId.toString(),
      maxClaimableAmount: '15000',
      signature: toHex(ctx.sign(key(SEEDS.voucherKey), channelId, 15000n)),
    },
  };
  return {
    note: 'a voucher payload for a channel with 10000 charged, at the price of 5000',
    paymentPayload: { x402Version: 2, accepted: requirements, payload },
    decoded: { channelId: channelId.toString(), maxClaimableAmount: '15000', kind: 'voucher' },
  };
}

type Outcome =
  | { outcome: 'adopt'; chargedCumulativeAmount: string; nextMaxClaimableAmount: string }
  | { outcome: 'unchanged' }
  | {
      outcome: 'refuse';
      reason:
        | 'voucher_not_client_key'
        | 'charged_above_voucher'
        | 'charged_below_claimed'
        | 'channel_mismatch'
        | 'no_voucher_state';
    };

interface CorrectiveCase {
  name: string;
  why: string;
  /** The client's books before this payment: what it believes charged, and the most it signed. */
  client: { chargedCumulativeAmount: bigint; signedMaxClaimable: bigint };
  charged: bigint;
  claimed: bigint;
  channelId?: bigint;
  /** The voucher the 402 proves its state with: its amount, and whose key signed which amount. */
  voucher?: { amount: bigint; signedAmount?: bigint; seed?: number };
  expected: Outcome;
}

function correctiveSection(requirements: BatchRequirements) {
  const passphrase = NETWORKS['stellar:local'].passphrase;
  const ctx = voucherContext(passphrase, CONTRACT_RAW);
  const channelId = channelIdOf(passphrase, CONTRACT_RAW, key(SEEDS.voucherKey).publicKey);
  const price = BigInt(requirements.amount);
  const deposit = 1_000_000n;
  const adopt = (charged: bigint): Outcome => ({
    outcome: 'adopt',
    chargedCumulativeAmount: charged.toString(),
    nextMaxClaimableAmount: (charged + price).toString(),
  });
  const books = { chargedCumulativeAmount: 10000n, signedMaxClaimable: 10000n };
  const cases: CorrectiveCase[] = [
    {
      name: 'adopt_lower',
      why: 'the seller charged 7000 of a 10000 ceiling and the answer was lost: the books go back to 7000',
      client: books,
      charged: 7000n,
      claimed: 0n,
      voucher: { amount: 10000n },
      expected: adopt(7000n),
    },
    {
      name: 'adopt_higher',
      why: 'the wallet file was put back to an older copy (nothing charged): the 402 proves 10000 with the key’s own voucher',
      client: { chargedCumulativeAmount: 0n, signedMaxClaimable: 0n },
      charged: 10000n,
      claimed: 0n,
      voucher: { amount: 10000n },
      expected: adopt(10000n),
    },
    {
      name: 'adopt_claimed',
      why: 'part of the charges already claimed on the ledger, the charged total above what was claimed',
      client: { chargedCumulativeAmount: 20000n, signedMaxClaimable: 20000n },
      charged: 12000n,
      claimed: 9000n,
      voucher: { amount: 15000n },
      expected: adopt(12000n),
    },
    {
      name: 'refuse_other_key',
      why: 'the voucherState signature is a valid signature of another key: not this channel’s voucher',
      client: books,
      charged: 7000n,
      claimed: 0n,
      voucher: { amount: 10000n, seed: SEEDS.otherVoucherKey },
      expected: { outcome: 'refuse', reason: 'voucher_not_client_key' },
    },
    {
      name: 'refuse_signature_of_other_amount',
      why: 'the client’s own signature of 10000 presented as the voucher of 20000',
      client: books,
      charged: 20000n,
      claimed: 0n,
      voucher: { amount: 20000n, signedAmount: 10000n },
      expected: { outcome: 'refuse', reason: 'voucher_not_client_key' },
    },
    {
      name: 'refuse_charged_above_voucher',
      why: 'the seller says 12000 charged, more than the 10000 the client’s voucher signs',
      client: books,
      charged: 12000n,
      claimed: 0n,
      voucher: { amount: 10000n },
      expected: { outcome: 'refuse', reason: 'charged_above_voucher' },
    },
    {
      name: 'refuse_charged_below_claimed',
      why: 'the seller says 5000 charged, below the 8000 the ledger shows claimed',
      client: books,
      charged: 5000n,
      claimed: 8000n,
      voucher: { amount: 10000n },
      expected: { outcome: 'refuse', reason: 'charged_below_claimed' },
    },
    {
      name: 'refuse_other_channel',
      why: 'the channel state names another channel',
      client: books,
      charged: 7000n,
      claimed: 0n,
      channelId: channelId + 1n,
      voucher: { amount: 10000n },
      expected: { outcome: 'refuse', reason: 'channel_mismatch' },
    },
    {
      name: 'refuse_without_voucher',
      why: 'a channel state with no voucherState proves nothing',
      client: books,
      charged: 7000n,
      claimed: 0n,
      expected: { outcome: 'refuse', reason: 'no_voucher_state' },
    },
    {
      name: 'unchanged',
      why: 'the proved state is the client’s own books: adopting it changes nothing, so there is no retry',
      client: books,
      charged: 10000n,
      claimed: 0n,
      voucher: { amount: 10000n },
      expected: { outcome: 'unchanged' },
    },
  ];
  const client = key(SEEDS.voucherKey);
  return {
    note: 'The client pays the terms above from the channel of voucherSeedHex (deposit 1000000), with its books as given; the payment it sends is answered by a 402 with error invalid_batch_settlement_stellar_cumulative_amount_mismatch whose batch-settlement option carries extra.channelState and extra.voucherState as given.',
    network: 'stellar:local',
    networkPassphrase: passphrase,
    channelContractRawHex: toHex(CONTRACT_RAW),
    voucherSeedHex: seedHex(SEEDS.voucherKey),
    channelId: channelId.toString(),
    deposit: deposit.toString(),
    price: price.toString(),
    cases: cases.map((c) => {
      const sent = c.client.chargedCumulativeAmount + price;
      const signerSeed = c.voucher?.seed ?? SEEDS.voucherKey;
      const channelState: ChannelState = {
        channelId: (c.channelId ?? channelId).toString(),
        balance: deposit.toString(),
        totalClaimed: formatUnits(c.claimed),
        chargedCumulativeAmount: formatUnits(c.charged),
        refundNonce: '0',
        expiryLedger: 100000,
      };
      const voucherState = c.voucher
        ? {
            signedMaxClaimable: c.voucher.amount.toString(),
            signature: toHex(ctx.sign(key(signerSeed), channelId, c.voucher.signedAmount ?? c.voucher.amount)),
          }
        : undefined;
      return {
        name: c.name,
        why: c.why,
        client: {
          chargedCumulativeAmount: c.client.chargedCumulativeAmount.toString(),
          signedMaxClaimable: c.client.signedMaxClaimable.toString(),
        },
        sentVoucher: {
          channelId: channelId.toString(),
          maxClaimableAmount: sent.toString(),
          signature: toHex(ctx.sign(client, channelId, sent)),
        },
        extra: { channelState, ...(voucherState ? { voucherState } : {}) },
        expected: c.expected,
      };
    }),
  };
}

type PaidOutcome =
  | { outcome: 'adopt'; chargedCumulativeAmount: string; nextMaxClaimableAmount: string }
  | {
      outcome: 'stop';
      reason: 'charge_above_price' | 'total_mismatch' | 'channel_mismatch' | 'no_charge' | 'no_channel_state';
    };

/**
 * Paid answers (PAYMENT-RESPONSE `extra`) to a voucher signed on 10000 charged at the price of 5000,
 * and what the client must do: adopt the new charged total, or sign no more on the channel.
 */
function paymentResponseSection(requirements: BatchRequirements) {
  const passphrase = NETWORKS['stellar:local'].passphrase;
  const ctx = voucherContext(passphrase, CONTRACT_RAW);
  const channelId = channelIdOf(passphrase, CONTRACT_RAW, key(SEEDS.voucherKey).publicKey);
  const price = BigInt(requirements.amount);
  const charged = 10000n;
  const state = (total: string, id = channelId): ChannelState => ({
    channelId: id.toString(),
    balance: '1000000',
    totalClaimed: '0',
    chargedCumulativeAmount: total,
    refundNonce: '0',
    expiryLedger: 100000,
  });
  const adopt = (total: bigint): PaidOutcome => ({
    outcome: 'adopt',
    chargedCumulativeAmount: total.toString(),
    nextMaxClaimableAmount: (total + price).toString(),
  });
  const cases: { name: string; why: string; extra: Record<string, unknown>; expected: PaidOutcome }[] = [
    {
      name: 'full_price',
      why: 'charged the price',
      extra: { chargedAmount: '5000', channelState: state('15000') },
      expected: adopt(15000n),
    },
    {
      name: 'below_price',
      why: 'dynamic pricing: charged 3500 of the 5000 signed for',
      extra: { chargedAmount: '3500', channelState: state('13500') },
      expected: adopt(13500n),
    },
    {
      name: 'nothing',
      why: 'charged 0: the books stay',
      extra: { chargedAmount: '0', channelState: state('10000') },
      expected: adopt(10000n),
    },
    {
      name: 'stop_charge_above_price',
      why: 'a charge of 6000 at a price of 5000',
      extra: { chargedAmount: '6000', channelState: state('16000') },
      expected: { outcome: 'stop', reason: 'charge_above_price' },
    },
    {
      name: 'stop_total_mismatch',
      why: 'charged 3500, but the total says 14000, not 10000 + 3500',
      extra: { chargedAmount: '3500', channelState: state('14000') },
      expected: { outcome: 'stop', reason: 'total_mismatch' },
    },
    {
      name: 'stop_other_channel',
      why: 'the state is another channel’s',
      extra: { chargedAmount: '5000', channelState: state('15000', channelId + 1n) },
      expected: { outcome: 'stop', reason: 'channel_mismatch' },
    },
    {
      name: 'stop_no_charge',
      why: 'no extra.chargedAmount',
      extra: { channelState: state('15000') },
      expected: { outcome: 'stop', reason: 'no_charge' },
    },
    {
      name: 'stop_no_channel_state',
      why: 'no extra.channelState',
      extra: { chargedAmount: '5000' },
      expected: { outcome: 'stop', reason: 'no_channel_state' },
    },
  ];
  const sent = charged + price;
  return {
    note: 'The client (books: 10000 charged) pays the terms above from the corrective section’s channel with sentVoucher; the paid answer (success true, transaction "", amount "") carries the case’s extra. adopt: the books move to chargedCumulativeAmount and the next voucher is nextMaxClaimableAmount. stop: the client signs no more on the channel.',
    client: { chargedCumulativeAmount: charged.toString(), signedMaxClaimable: charged.toString() },
    sentVoucher: {
      channelId: channelId.toString(),
      maxClaimableAmount: sent.toString(),
      signature: toHex(ctx.sign(key(SEEDS.voucherKey), channelId, sent)),
    },
    cases,
  };
}

export function buildBindingVectors() {
  const requirements = requirementsOf();
  return {
    description:
      'Test vectors of the Stellar binding of x402 batch-settlement (docs/schemes/scheme_batch_settlement_stellar.md). Bytes are lowercase hex; amounts, channel ids and nonces decimal strings. Made by scripts/binding-vectors.ts.',
    networks: networksSection(),
    keys: keysSection(),
    channelIds: channelIdsSection(),
    vouchers: vouchersSection(),
    strictVerification: strictSection(),
    paymentRequirements: requirements,
    voucherPayload: payloadSection(requirements),
    paymentResponse: paymentResponseSection(requirements),
    corrective: correctiveSection(requirements),
  };
}

/** The file as committed: two-space JSON and a final newline. */
export function renderBindingVectors(): string {
  return `${JSON.stringify(buildBindingVectors(), null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  writeFileSync(path.join(root, VECTORS_FILE), renderBindingVectors());
  console.log(`wrote ${VECTORS_FILE}`);
}
