// The facilitator as a library, for operators who embed it (the `svc start` command does this):
//
//   import { createFacilitator, loadConfig } from '@svc/facilitator';
//   const facilitator = await createFacilitator({ config: loadConfig({ PORT: '4020', DATA_DIR: './data' }) });
//   console.log(await facilitator.listen());
//   // … await facilitator.close();
export { createFacilitator } from './facilitator.js';
export type { Facilitator, FacilitatorOptions } from './facilitator.js';
export { ConfigError, configDefaults, loadConfig } from './config.js';
export type { Config } from './config.js';
