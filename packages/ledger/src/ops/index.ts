// Every op the local ledger knows: the asset, channel, smart-account, DEX and credit-pool contracts.
import { accountCreateOp, accountFreezeOp, accountSetPolicyOp } from './account.js';
import {
  channelClaimManyOp,
  channelClaimOp,
  channelCloseOp,
  channelOpenOp,
  channelRefundOp,
  channelTopUpOp,
} from './channel.js';
import { dexSwapOp } from './dex.js';
import { poolDepositOp, poolWithdrawOp } from './pool.js';
import { poolLiquidateOp } from './pool-liquidate.js';
import { poolCloseLineOp, poolOpenLineOp } from './pool-lines.js';
import { opRegistry } from './registry.js';
import type { OpRegistry } from './registry.js';
import { transferOp } from './transfer.js';

export const DEFAULT_OPS: OpRegistry = opRegistry([
  transferOp,
  channelOpenOp,
  channelTopUpOp,
  channelClaimOp,
  channelClaimManyOp,
  channelRefundOp,
  channelCloseOp,
  accountCreateOp,
  accountSetPolicyOp,
  accountFreezeOp,
  dexSwapOp,
  poolDepositOp,
  poolWithdrawOp,
  poolOpenLineOp,
  poolCloseLineOp,
  poolLiquidateOp,
]);
