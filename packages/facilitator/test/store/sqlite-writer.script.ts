// Child process for the kill -9 test: writes vouchers on several channels as fast as group commit
// allows and prints one line per acknowledged write; the parent SIGKILLs it mid-stream.
// Usage: node --import tsx sqlite-writer.script.ts <file>
import { SqliteStore } from '../../src/store/index.js';
import { acceptOps, channel } from './builders.js';

const CHANNELS = 16;
const STEP = 1_000n;

const file = process.argv[2];
if (!file) throw new Error('usage: sqlite-writer.script.ts <file>');
const store = await SqliteStore.open({ file });
await store.migrate();
const ids = Array.from({ length: CHANNELS }, (_, i) => BigInt(i + 1));
await store.write(ids.map((id) => ({ op: 'channel.insert', channel: channel(id) })));
process.stdout.write('ready\n');

const last = new Map(ids.map((id) => [id, 0n]));
for (;;) {
  await Promise.all(
    ids.map(async (id) => {
      const expected = last.get(id) ?? 0n;
      const accepted = acceptOps(id, expected, expected + STEP);
      const out = await store.write(accepted.ops);
      if (!out.ok) throw new Error(`unexpected ${out.reason}`);
      last.set(id, expected + STEP);
      // stdout is a pipe: writes are synchronous on Linux, so a printed line has left the process.
      process.stdout.write(`ack ${id} ${expected + STEP} ${out.events[0]?.id} ${accepted.receipt.id}\n`);
    }),
  );
}
