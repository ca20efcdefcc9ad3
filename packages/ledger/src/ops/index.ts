// Every op the local ledger knows. Later contracts (account.*, pool.*, dex.swap) are added here.
import { channelClaimOp, channelCloseOp, channelOpenOp, channelTopUpOp } from './channel.js';
import { opRegistry } from './registry.js';
import type { OpRegistry } from './registry.js';
import { transferOp } from './transfer.js';

export const DEFAULT_OPS: OpRegistry = opRegistry([transferOp, channelOpenOp, channelTopUpOp, channelClaimOp, channelCloseOp]);
