// Waits for a condition an asynchronous system reaches by itself (a leader elected, a claim seen on
// the ledger): polls `check` (a throw counts as not yet) and fails the test after `timeoutMs`.
export async function until(check: () => Promise<boolean>, timeoutMs: number, pollMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
