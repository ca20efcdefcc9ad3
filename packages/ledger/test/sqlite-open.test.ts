// better-sqlite3 built for another Node: the error a user sees names the command that fixes it. The
// message below is Node's own (src/node_binding.cc) for an addon of another ABI; the consumer test
// provokes the real one by starting a facilitator installed under Node 22 with Node 20.
import { describe, expect, it } from 'vitest';
import { explainNativeAddon } from '@svc/ledger';

const NODE_MESSAGE = `The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node'
was compiled against a different Node.js version using
NODE_MODULE_VERSION 115. This version of Node.js requires
NODE_MODULE_VERSION 137. Please try re-compiling or re-installing
the module (for instance, using \`npm rebuild\` or \`npm install\`).`;

describe('explainNativeAddon', () => {
  it('turns an addon built for another Node into the command that rebuilds it', () => {
    const err = Object.assign(new Error(NODE_MESSAGE), { code: 'ERR_DLOPEN_FAILED' });
    const explained = explainNativeAddon(err) as Error;
    expect(explained.message).toMatch(
      /built for another Node\.js \(NODE_MODULE_VERSION 115; this is Node v\d+\.\d+\.\d+, which needs 137\)/,
    );
    expect(explained.message).toContain('`npm rebuild better-sqlite3`');
    expect(explained.cause).toBe(err);
  });

  it('leaves every other error as it is', () => {
    const missing = Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' });
    expect(explainNativeAddon(missing)).toBe(missing);
    const other = Object.assign(new Error('invalid ELF header'), { code: 'ERR_DLOPEN_FAILED' });
    expect(explainNativeAddon(other)).toBe(other);
  });
});
