// Every op the local ledger knows. Later contracts (pool.*) are added here.
import { accountCreateOp, accountFreezeOp, accountSetPolicyOp } from './account.js';
import { channelClaimOp, channelCloseOp, channelOpenOp, channelTopUpOp } from './channel.js';
import { dexSwapOp } from './dex.js';
import { opRegistry } from './registry.js';
import type { OpRegistry } from './registry.js';
import { transferOp } from './transfer.js';

export const DEFAULT_OPS: OpRegistry = opRegistry([
  transferOp,
  channelOpenOp,
  channelTopUpOp,
  channelClaimOp,
  channelCloseOp,
  accountCreateOp,
  accountSetPolicyOp,
  accountFreezeOp,
  dexSwapOp,
]);
