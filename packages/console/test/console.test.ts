// The web console, driven in a real Chromium (Debian's package through playwright-core) against a
// real facilitator: a payment made here shows up in the Live feed; after a demo run the Seller
// view's totals are the revenue endpoint's, its claim buttons settle and its CSV download holds
// the settled rows; Account, Float and Catalog show what their endpoints say; the page says so
// when the facilitator is unreachable and recovers when it is back. A screenshot of each view,
// populated by the demo run, is saved under test-results/console/.
//
// Without /usr/bin/chromium (or SVC_TEST_CHROMIUM) the suite is skipped LOUDLY on a developer
// machine; with CI=true it runs and fails (scripts/setup-browser.sh installs Chromium; .ci/run
// calls it).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayAmount } from '@svc/core';
import type {
  AccountView,
  ChannelList,
  DemoInfo,
  FloatView,
  RevenueReport,
  StatsView,
  SupportedResponse,
} from '@svc/core';
import { createFacilitator } from '../../facilitator/src/facilitator.js';
import type { Facilitator } from '../../facilitator/src/facilitator.js';
import { startHarness } from '../../facilitator/test/helpers/harness.js';
import type { Buyer, Harness } from '../../facilitator/test/helpers/harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTEFACTS = path.join(ROOT, 'test-results/console');
/** Debian's Chromium; SVC_TEST_CHROMIUM names another build. */
const CHROMIUM = process.env['SVC_TEST_CHROMIUM'] ?? '/usr/bin/chromium';
// Without the background-networking switches Chromium reaches for Google's services, which a
// closed network refuses.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const VIEWPORT = { width: 1400, height: 900 };
/** A laptop and a phone (an iPhone 14's CSS width); the layout must fit both without sideways scrolling. */
const WIDTHS = [1400, 390] as const;
const DEMO_RUN_MS = 45_000;

function inCi(): boolean {
  const ci = process.env['CI'];
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

function browserTestsEnabled(): boolean {
  if (fs.existsSync(CHROMIUM) || inCi()) return true;
  console.warn(
    [
      '',
      '#'.repeat(78),
      `#  CONSOLE BROWSER TESTS SKIPPED: no Chromium at ${CHROMIUM}`,
      '#  The web console is NOT being tested. Run scripts/setup-browser.sh (Debian: apt-get',
      '#  install chromium) or set SVC_TEST_CHROMIUM; with CI=true these tests run and fail.',
      '#'.repeat(78),
      '',
    ].join('\n'),
  );
  return false;
}

/** Polls `probe` until it returns non-null. */
async function eventually<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: Error | null = null;
  for (;;) {
    try {
      const value = await probe();
      if (value !== null) return value;
    } catch (err) {
      last = err instanceof Error ? err : new Error(String(err));
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function short(address: string): string {
  return `${address.slice(0, 4)}…${address.slice(-4)}`;
}

describe.runIf(browserTestsEnabled())('the web console in Chromium', () => {
  let h: Harness;
  let restarted: Facilitator | null = null;
  let browser: Browser;
  let page: Page;
  let code: string;
  let seller: string;
  let smartAccount: string;
  let demoChannel: string;
  let testBuyer: Buyer;
  let testChannel: bigint;
  const problems: string[] = [];
  const get = async <T>(p: string): Promise<T> => (await (await fetch(`${h.url}${p}`)).json()) as T;
  const money = (units: string) => `${displayAmount(BigInt(units))} ${code}`;
  const text = async (selector: string) => ((await page.locator(selector).first().textContent()) ?? '').trim();

  /** Shows a view by its URL fragment, as following a link does, and waits for it. */
  async function show(hash: string, ready: string): Promise<void> {
    await page.evaluate((fragment) => (window.location.hash = fragment), hash);
    await page.locator(ready).first().waitFor({ timeout: 15_000 });
  }

  async function screenshot(name: string, on: Page = page): Promise<void> {
    await on.evaluate(() => window.scrollTo(0, 0)); // the header is sticky: keep it at the top of the picture
    await on.waitForTimeout(300); // let the charts settle into their boxes
    const file = path.join(ARTEFACTS, `${name}.png`);
    await on.screenshot({ path: file, fullPage: true });
    console.log(`console screenshot: ${path.relative(ROOT, file)}`);
  }

  /** How much wider than the window the page is (0 when it fits), and which elements stick out. */
  async function overflow(on: Page): Promise<{ scrollWidth: number; clientWidth: number; culprits: string[] }> {
    return on.evaluate(() => {
      const root = document.documentElement;
      const culprits = Array.from(document.querySelectorAll('body *'))
        .filter((el) => el.getBoundingClientRect().right > root.clientWidth + 0.5)
        .slice(0, 5)
        .map(
          (el) => `${el.tagName.toLowerCase()}.${el.className} (${Math.round(el.getBoundingClientRect().right)} px)`,
        );
      return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, culprits };
    });
  }

  beforeAll(async () => {
    // The real build, made if missing or older than its sources (as `npm start` does).
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { cwd: ROOT, stdio: 'inherit' });
    fs.mkdirSync(ARTEFACTS, { recursive: true });
    // The demo world on a fast ledger, short ticker slices (a quicker run), a float sample every
    // second, and no scheduled claims: the settlements are the ones made with the claim buttons.
    h = await startHarness({
      DEMO_SEED: '1',
      TICKER_SLICE_SECONDS: '2',
      FLOAT_SAMPLE_SECONDS: '1',
      CLAIM_INTERVAL_SECONDS: '3600',
    });
    const supported = await get<SupportedResponse>('/supported');
    code = supported.kinds[0]!.extra.assetCode;
    const started = await fetch(`${h.url}/demo/agent/run`, { method: 'POST' });
    expect(started.status).toBe(202);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: VIEWPORT, acceptDownloads: true });
    page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text()))
        problems.push(`console ${m.type()}: ${m.text()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    if (restarted) await restarted.close();
    else await h?.f.close();
    if (h) fs.rmSync(h.dataDir, { recursive: true, force: true });
  });

  it('shows a payment made in the test in the Live feed, as a sentence, as it happens', async () => {
    await page.goto(`${h.url}/#/live`);
    await page.locator('#status[data-state="live"]').waitFor({ timeout: 15_000 });
    const b = await h.buyer();
    testBuyer = b;
    testChannel = b.channelId;
    const voucher = b.signer.next(5000n);
    const paid = await h.verify(voucher);
    expect(paid.body['isValid']).toBe(true);
    b.signer.confirm(BigInt(voucher.cumulative));
    const item = page.locator(`ol.feed li[data-event="voucher.accepted"][data-channel="${b.channelId}"]`);
    await item.waitFor({ timeout: 10_000 });
    const sentence = (await item.locator('.sentence').textContent()) ?? '';
    expect(sentence).toMatch(
      new RegExp(
        `^${short(b.keys.address)} paid ${money('5000').replace('.', '\\.')} to ${short(b.payee)} for /test/resource on channel ${b.channelId} \\(verified in [0-9.]+ ms\\)\\.$`,
      ),
    );
  });

  it(
    'runs the demo, whose payments fill the feed',
    async () => {
      const info = await eventually(
        'the demo run to finish',
        async () => {
          const i = await get<DemoInfo>('/demo/info');
          return !i.agent.running && i.agent.run?.status === 'done' ? i : null;
        },
        DEMO_RUN_MS,
      );
      seller = info.seller;
      smartAccount = info.world!.account!;
      demoChannel = info.agent.run!.channelId!;
      await page.locator(`ol.feed li[data-event="demo.agent.finished"]`).waitFor({ timeout: 10_000 });
      expect(
        await page.locator(`ol.feed li[data-event="voucher.accepted"][data-channel="${demoChannel}"]`).count(),
      ).toBeGreaterThan(5);
      expect(await page.locator('ol.feed li[data-event="voucher.rejected"]').count()).toBe(1); // the frozen account's voucher
    },
    DEMO_RUN_MS + 15_000,
  );

  it('Seller: totals equal GET /sellers/:payTo/revenue, claim buttons settle, the link is shareable', async () => {
    await show(`#/seller/${seller}?bucket=hour`, '[data-field="earned"]');
    for (const channel of [demoChannel, testChannel.toString()]) {
      await page.locator(`button[data-action="claim"][data-channel="${channel}"]:not([disabled])`).click();
      await eventually(`the claim of channel ${channel}`, async () =>
        (await text('.status')).startsWith(`Channel ${channel}: `) ? true : null,
      );
    }
    await eventually('two settlements listed', async () =>
      (await page.locator('table[data-table="settlements"] tbody tr:not(.empty)').count()) === 2 ? true : null,
    );
    // One more payment after the claims: something receivable again, in the youngest aging bucket.
    expect((await h.verify(testBuyer.signer.next(5000n))).body['isValid']).toBe(true);
    // The page and the endpoint agree exactly, once the page has read the last change.
    const revenue = await eventually('the page to show the revenue endpoint’s totals', async () => {
      const r = await get<RevenueReport>(`/sellers/${seller}/revenue?bucket=hour&days=2`);
      const shown = [
        await text('[data-field="earned"]'),
        await text('[data-field="settled"]'),
        await text('[data-field="receivable"]'),
      ];
      return shown.join('|') === [money(r.totals.earned), money(r.totals.settled), money(r.totals.receivable)].join('|')
        ? r
        : null;
    });
    expect(revenue.totals.settlements).toBe(2);
    expect(BigInt(revenue.totals.settled)).toBeGreaterThan(0n);
    expect(revenue.totals.receivable).toBe('5000');
    expect(await text('table[data-table="aging"] tbody tr')).toContain(money('5000'));
    expect(await text('[data-field="payments"]')).toBe(String(revenue.totals.payments));
    // Payments per settlement is what the settlements covered, on average: here two that covered
    // different counts (the demo channel's many, the test channel's one), not payments ÷ claims.
    const covered = revenue.settlements.map((s) => s.paymentsCovered ?? 0);
    expect(new Set(covered).size).toBe(2);
    expect(revenue.totals.paymentsPerSettlement).toBe(
      Math.round((covered.reduce((a, b) => a + b, 0) * 100) / covered.length) / 100,
    );
    expect(revenue.totals.paymentsPerSettlement).toBeLessThan(revenue.totals.payments / revenue.totals.settlements);
    expect(await text('[data-field="paymentsPerSettlement"]')).toBe(String(revenue.totals.paymentsPerSettlement));
    expect(await page.locator('table[data-table="resources"] tbody tr').count()).toBe(revenue.byResource.length);
    expect(await text('pre.snippet')).toContain(`payTo: '${seller}'`);
    expect(await text('pre.snippet')).toContain('npm install express @svc/meter'); // the published names, runnable as shown
    expect(await text('pre.snippet')).toContain('app.listen(');
    // When do I get paid: the policy in a sentence, and per open channel the way to the
    // threshold, as the API's figures give it.
    const policy = revenue.settlementPolicy;
    expect(await text('[data-field="settlementPolicy"]')).toContain(money(policy.threshold));
    const { channels: listed } = await get<ChannelList>(`/channels?payee=${seller}`);
    const owing = listed.find((c) => c.status === 'open' && c.unclaimed !== '0');
    expect(owing).toBeDefined();
    const bps = Number((BigInt(owing!.unclaimed) * 10000n) / BigInt(policy.threshold));
    const expected = `${(Math.min(bps, 10000) / 100).toFixed(2)} %`;
    // One date-time format everywhere: tables, the chart's note and its legend.
    const stampRe = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
    expect(await text('table[data-table="settlements"] tbody tr td')).toMatch(stampRe);
    expect(await text('main')).not.toMatch(/\b\d{1,2}\/\d{1,2}\/\d{2,4}\b|\d (AM|PM)\b/);
    await eventually('the channel’s progress to the threshold', async () =>
      (await text(`tr[data-channel="${owing!.id}"] [data-field="toThreshold"]`)) === expected ? true : null,
    );

    // The same address and bucket, opened from the URL alone in another tab.
    const shared = await page.context().newPage();
    await shared.goto(`${h.url}/#/seller/${seller}?bucket=day`);
    await shared.locator('[data-field="earned"]').waitFor({ timeout: 15_000 });
    expect(await shared.locator('.toggle a.on').textContent()).toBe('day');
    expect(await shared.locator('input[name="address"]').inputValue()).toBe(seller);
    await shared.close();
  });

  it('Seller: the CSV download holds every settled row, as the endpoint writes them', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('a[data-action="csv"]').click()]);
    const csv = fs.readFileSync(await download.path(), 'utf8');
    fs.writeFileSync(path.join(ARTEFACTS, 'settlements.csv'), csv);
    expect(download.suggestedFilename()).toBe(`settlements-${seller}.csv`);
    expect(csv).toBe(await (await fetch(`${h.url}/sellers/${seller}/settlements.csv`)).text());
    const [header, ...rows] = csv.trim().split(/\r?\n/);
    expect(header).toBe('settled_at,tx,channel_id,payer,amount,payments_covered,explorer');
    const revenue = await get<RevenueReport>(`/sellers/${seller}/revenue?bucket=hour&days=2`);
    const expected = revenue.settlements.map((s) =>
      [s.tx, s.channelId, s.payer, displayAmount(BigInt(s.amount)), String(s.paymentsCovered)].join(','),
    );
    expect(rows.map((r) => r.split(',').slice(1, 6).join(',')).sort()).toEqual(expected.sort());
    expect(rows.map((r) => r.split(',')[2]).sort()).toEqual([demoChannel, testChannel.toString()].sort());
  });

  it('Account: policy, today’s spend against the caps, frozen state, channels and the ledger', async () => {
    await show(`#/account/${smartAccount}`, '[data-field="frozen"]');
    const account = await get<AccountView>(`/accounts/${smartAccount}`);
    expect(account.frozen).toBe(false); // the owner thawed it after the demo's stop
    expect(await text('[data-field="frozen"]')).toBe('Not frozen');
    expect(await text('[data-field="spentToday"]')).toBe(money(account.spentToday));
    // Deposits are named as deposits, and what was paid is the channels' accepted vouchers.
    expect(await text('[data-panel="policy"]')).toContain('Deposited into channels today');
    const paid = account.channels.reduce((sum, c) => sum + BigInt(c.lastAccepted), 0n);
    expect(await text('[data-field="paidOnChannels"]')).toBe(money(paid.toString()));
    expect(paid).toBeLessThan(BigInt(account.spentToday)); // the demo's deposits are far more than its payments
    const policy = await text('[data-panel="policy"]');
    expect(policy).toContain(money(account.policy!.perTxCap));
    expect(policy).toContain(money(account.policy!.dailyCap));
    await page.locator('[data-panel="ledger"] li[data-event="account.frozen"]').first().waitFor();
    await page.locator('table[data-table="line"]').waitFor();
  });

  it('Float: the pool, its share price over time, and the credit line with its health', async () => {
    const float = await get<FloatView>('/float');
    await show('#/float', '[data-field="size"]');
    expect(await text('[data-field="size"]')).toBe(money(float.pool.size));
    expect(await text('[data-field="sharePrice"]')).toBe(money(float.pool.sharePrice));
    expect(await text('table[data-table="lines"] tbody')).toContain(short(smartAccount));
    expect(await page.locator('table[data-table="positions"] tbody tr').count()).toBe(float.positions.length);
  });

  it('Catalog: every listing with its price and unit', async () => {
    await show('#/catalog', 'table[data-table="catalog"] tbody tr td');
    const rows = await page.locator('table[data-table="catalog"] tbody tr').allTextContents();
    const book = rows.find((r) => r.includes('/demo/book'));
    expect(book).toContain(`${money('5000')} per request`);
    expect(rows.find((r) => r.includes('/demo/chat'))).toContain(`${money('200')} per token`);
    expect(rows.find((r) => r.includes('/demo/ticker/stream'))).toContain(`${money('1000')} per second`);
  });

  it('Live: the totals of GET /stats, the latency histogram and the rejections, after the run', async () => {
    await show('#/live', '[data-field="vouchersAccepted"]');
    const stats = await eventually('the page to show /stats', async () => {
      const s = await get<StatsView>('/stats');
      return (await text('[data-field="vouchersAccepted"]')) === String(s.vouchersAccepted) &&
        (await text('[data-field="chainTxCount"]')) === String(s.chainTxCount)
        ? s
        : null;
    });
    expect(await text('[data-field="volume"]')).toBe(money(stats.volume));
    // Both claims paid the demo's seller: /stats and the seller's revenue agree on what they covered.
    const revenue = await get<RevenueReport>(`/sellers/${seller}/revenue?bucket=hour&days=2`);
    expect(stats.vouchersPerClaim).toBe(
      Math.round(
        (revenue.settlements.reduce((a, s) => a + (s.paymentsCovered ?? 0), 0) * 10) / revenue.settlements.length,
      ) / 10,
    );
    expect(await text('[data-field="vouchersPerClaim"]')).toBe(String(stats.vouchersPerClaim));
    // Two medians, each saying what it measures.
    expect(await text('[data-panel="stats"] .stat:has([data-field="medianVerifyLatencyMs"]) .label')).toBe(
      'Median verification + write',
    );
    expect(await text('[data-field="medianVerifyLatencyMs"]')).toBe(`${stats.medianVerifyLatencyMs} ms`);
    expect(await text('.view.live p:has([data-field="feedMedianLatencyMs"])')).toMatch(
      /^Signature check only, before the durable write .* Their median: [0-9.]+ ms\. The figure above also counts the write\.$/,
    );
    expect(await text('[data-panel="rejections"]')).toContain('ACCOUNT_FROZEN × 1');
    expect(problems).toEqual([]); // no script error, no CSP violation, no failed request so far
  });

  it('a bad address is said once, in the browser: no request about it, no chart, no snippet', async () => {
    // The seller's address with its last character changed: the right shape, a wrong checksum.
    const typo = seller.slice(0, -1) + (seller.endsWith('A') ? 'B' : 'A');
    const asked: string[] = [];
    const watch = (r: { url(): string }) => {
      if (r.url().includes(typo)) asked.push(r.url());
    };
    page.on('request', watch);
    for (const view of ['seller', 'account']) {
      await show(`#/${view}/${typo}`, '[data-problem="address"]:not(:empty)');
      await page.waitForTimeout(500); // time for anything that would ask or draw to do so
      expect(await page.locator('[data-problem="address"]:not(:empty)').allTextContents()).toEqual([
        `“${typo.slice(0, 12)}…${typo.slice(-8)}” is not an address: its checksum does not match (a character is mistyped or missing).`,
      ]);
      expect(await page.locator('.problem').count()).toBe(1);
      expect(await page.locator('.chart, canvas, pre.snippet, .stats').count()).toBe(0);
    }
    // Typed into the form: said beside it, and the page stays where it was.
    await page.locator('input[name="address"]').fill('GNOTANADDRESS');
    await page.locator('form.picker button[type="submit"]').click();
    expect(await text('form.picker [data-problem="address"]')).toBe(
      '“GNOTANADDRESS” is not an address: an address is 56 characters (A–Z, 2–7) starting with G, or C for a smart account.',
    );
    expect(await page.evaluate(() => window.location.hash)).toBe(`#/account/${typo}`);
    page.off('request', watch);
    expect(asked).toEqual([]);
    await show('#/live', '[data-field="vouchersAccepted"]'); // where the next test expects the page
  });

  it('charts: an empty one says so; legends show the latest point, not "--"', async () => {
    // A real address nobody paid: its revenue chart is empty and says so.
    const nobody = (await h.buyer()).keys.address;
    await show(`#/seller/${nobody}?bucket=hour`, '[data-field="earned"]');
    await page.locator('.chart.empty').waitFor({ timeout: 5000 });
    expect(await page.locator('.chart.empty').getAttribute('data-empty')).toBe(
      'No payment and no settlement in this window.',
    );
    await show(`#/seller/${seller}?bucket=hour`, '[data-field="earned"]');
    await page.locator('.chart:not(.empty) .u-legend').waitFor({ timeout: 5000 });
    expect(await text('.chart .u-legend')).not.toContain('--');
    await show('#/live', '[data-field="vouchersAccepted"]');
  });

  it('every view fits a 1400 px and a 390 px window: no sideways scrolling; screenshots of each', async () => {
    const views: [string, string, string][] = [
      ['live', '#/live', '[data-field="vouchersAccepted"]'],
      ['seller', `#/seller/${seller}?bucket=hour`, 'table[data-table="channels"]'],
      ['seller-by-day', `#/seller/${seller}?bucket=day`, 'table[data-table="channels"]'],
      ['seller-picker', '#/seller', '.known a.chip'],
      ['seller-bad-address', `#/seller/${seller.slice(0, -1)}${seller.endsWith('A') ? 'B' : 'A'}`, '.problem'],
      ['account', `#/account/${smartAccount}`, 'table[data-table="line"]'],
      ['float', '#/float', 'table[data-table="lines"]'],
      ['catalog', '#/catalog', 'table[data-table="catalog"] tbody tr td'],
    ];
    const wide: string[] = [];
    for (const width of WIDTHS) {
      const context = await browser.newContext({ viewport: { width, height: 844 } });
      const p = await context.newPage();
      await p.goto(`${h.url}/#/live`);
      for (const [name, hash, ready] of views) {
        await p.evaluate((fragment) => (window.location.hash = fragment), hash);
        await p.locator(ready).first().waitFor({ timeout: 15_000 });
        await screenshot(`${name}-${width}`, p);
        const { scrollWidth, clientWidth, culprits } = await overflow(p);
        console.log(
          `console layout: ${name} in a ${width} px window: page ${scrollWidth} px, window ${clientWidth} px`,
        );
        if (scrollWidth > clientWidth)
          wide.push(`${name} at ${width} px: ${scrollWidth} > ${clientWidth} px (${culprits.join(', ')})`);
      }
      await context.close();
    }
    expect(wide).toEqual([]);
  });

  it('says the facilitator is unreachable when it stops, and recovers when it is back', async () => {
    const port = new URL(h.url).port;
    const config = h.f.services.config;
    await h.f.close();
    await page.locator('#banner').waitFor({ state: 'visible', timeout: 15_000 });
    expect(await text('#banner')).toContain('is unreachable');
    expect(await page.locator('#status').getAttribute('data-state')).toBe('down');
    await screenshot('unreachable');

    // The same facilitator (same data, same port) comes back: the banner goes, the feed resumes.
    restarted = await createFacilitator({ config: { ...config, PORT: Number(port) }, watchPollMs: 50 });
    await restarted.listen();
    await page.locator('#banner').waitFor({ state: 'hidden', timeout: 15_000 });
    await page.locator('#status[data-state="live"]').waitFor({ timeout: 15_000 });
    const b = await h.buyer();
    expect((await h.verify(b.signer.next(5000n))).body['isValid']).toBe(true);
    await page
      .locator(`ol.feed li[data-event="voucher.accepted"][data-channel="${b.channelId}"]`)
      .waitFor({ timeout: 10_000 });
    const errors = problems.filter(
      (p) => !/Failed to load resource|net::ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|EventSource/i.test(p),
    );
    expect(errors).toEqual([]);
  });
});
