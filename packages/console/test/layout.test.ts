// Every figure and every button of every view can be read, in a real Chromium at a laptop's
// 1280 × 800 and a phone's 390 × 844, with data in each view: the demo world seeded (a smart
// account with its credit line), and a buyer that paid the demo seller on a channel that still owes
// it (so the Seller view has a Claim button to press and a chart to draw).
//
// What "can be read" means here (checked for each `[data-field]`, each button, and each cell of a
// table that carries buttons):
// - it is drawn: a box of some size, not hidden;
// - it lies within the window's width, with no sideways scrolling of the page or of any box around
//   it: a wide table may still scroll sideways, but not over a figure or a button, which a reader
//   would then have to find (tables that carry figures or buttons lay out as cards on a phone);
// - it lies within its panel (`.panel` or `.stat`), and its text fits its own box and its cell
//   (scrollWidth ≤ clientWidth): a long label does not push a value out of sight.
// The revenue chart's caption names the span its axis draws, and its time axis repeats no label.
//
// Without /usr/bin/chromium (or SVC_TEST_CHROMIUM) the suite is skipped with a warning, as
// console.test.ts is; with CI=true it runs and fails.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoInfo, RevenueReport } from '@svc/core';
import { startHarness } from '../../facilitator/test/helpers/harness.js';
import type { Harness } from '../../facilitator/test/helpers/harness.js';
import { VIEWS } from '../src/router.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ARTEFACTS = path.join(ROOT, 'test-results/console-layout');
const CHROMIUM = process.env['SVC_TEST_CHROMIUM'] ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const WINDOWS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

function enabled(): boolean {
  const ci = process.env['CI'];
  if (fs.existsSync(CHROMIUM) || (ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false'))
    return true;
  console.warn(`\n#### CONSOLE LAYOUT TESTS SKIPPED: no Chromium at ${CHROMIUM} (scripts/setup-browser.sh) ####\n`);
  return false;
}

async function eventually<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** What is wrong with the figures and buttons of the view on the page: one line each, [] when nothing. */
function unreadable(on: Page): Promise<string[]> {
  return on.evaluate(() => {
    const found: string[] = [];
    const width = document.documentElement.clientWidth;
    const name = (el: Element) => {
      const field = el.getAttribute('data-field');
      const what = field ? `[data-field=${field}]` : `${el.tagName.toLowerCase()} “${(el.textContent ?? '').trim()}”`;
      const panel = el.closest('.panel')?.querySelector('h2')?.textContent;
      return panel ? `${what} in “${panel}”` : what;
    };
    // And every cell of a table that carries buttons (table.cards: the Seller view's channels).
    const targets = document.querySelectorAll<HTMLElement>(
      'main [data-field], main button, main .button, main table.cards td',
    );
    for (const el of Array.from(targets)) {
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (r.width < 1 || r.height < 1 || style.visibility === 'hidden') {
        found.push(`${name(el)}: not drawn`);
        continue;
      }
      if (r.left < -0.5 || r.right > width + 0.5)
        found.push(`${name(el)}: outside the window (${Math.round(r.left)}–${Math.round(r.right)} of ${width} px)`);
      const box = el.closest('.stat') ?? el.closest('.panel');
      if (box) {
        const b = box.getBoundingClientRect();
        if (r.left < b.left - 0.5 || r.right > b.right + 0.5)
          found.push(`${name(el)}: outside its panel (${Math.round(r.right)} > ${Math.round(b.right)} px)`);
      }
      // Any box around it that scrolls sideways and has it out of sight.
      for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
        if (up.scrollWidth > up.clientWidth + 1 && getComputedStyle(up).overflowX !== 'visible') {
          const u = up.getBoundingClientRect();
          if (r.left < u.left - 0.5 || r.right > u.right + 0.5)
            found.push(`${name(el)}: scrolled out of sight in ${up.tagName.toLowerCase()}.${up.className}`);
        }
      }
      // Its text fits its own box and its cell.
      for (const cell of [el, el.closest('td')]) {
        if (cell && cell.clientWidth > 0 && cell.scrollWidth > cell.clientWidth + 1)
          found.push(`${name(el)}: text overflows (${cell.scrollWidth} > ${cell.clientWidth} px)`);
      }
    }
    return found;
  });
}

describe.runIf(enabled())('every figure and button of the console, at 1280 px and 390 px', () => {
  let h: Harness;
  let browser: Browser;
  let seller: string;
  let account: string;
  const get = async <T>(p: string): Promise<T> => (await (await fetch(`${h.url}${p}`)).json()) as T;

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { cwd: ROOT, stdio: 'inherit' });
    fs.mkdirSync(ARTEFACTS, { recursive: true });
    h = await startHarness({ DEMO_SEED: '1', FLOAT_SAMPLE_SECONDS: '1', CLAIM_INTERVAL_SECONDS: '3600' });
    const info = await eventually('the demo world', async () => {
      const i = await get<DemoInfo>('/demo/info');
      return i.world?.account ? i : null;
    });
    seller = info.seller;
    account = info.world!.account!;
    await eventually('the demo credit line', async () =>
      (await fetch(`${h.url}/float/lines/${account}`)).status === 200 ? true : null,
    );
    // Two payments on a channel nobody has claimed: the seller is owed, and the Claim button is live.
    const buyer = await h.buyer({ payee: seller });
    for (let i = 0; i < 2; i++) {
      const voucher = buyer.signer.next(5000n);
      expect((await h.verify(voucher, h.requirements({ payTo: seller }))).body['isValid']).toBe(true);
      buyer.signer.confirm(BigInt(voucher.cumulative));
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  /** Each view of the router, at an address that has data, and what shows it is drawn. */
  const views = (): Record<(typeof VIEWS)[number], [string, string]> => ({
    live: ['#/live', '.stats [data-field="vouchersAccepted"]'],
    seller: [`#/seller/${seller}?bucket=hour`, 'button[data-action="claim"]:not([disabled])'],
    account: [`#/account/${account}`, 'table[data-table="line"]'],
    float: ['#/float', 'table[data-table="lines"] tbody tr td'],
    catalog: ['#/catalog', 'table[data-table="catalog"] tbody tr td'],
  });

  for (const size of WINDOWS) {
    it(`shows every figure and button of each view whole, in a ${size.width} × ${size.height} window`, async () => {
      const context = await browser.newContext({ viewport: size });
      const page = await context.newPage();
      const problems: string[] = [];
      let checked = 0;
      try {
        await page.goto(`${h.url}/#/live`);
        for (const view of VIEWS) {
          const [hash, ready] = views()[view];
          await page.evaluate((fragment) => (window.location.hash = fragment), hash);
          await page.locator(ready).first().waitFor({ timeout: 15_000 });
          await page.waitForTimeout(300); // charts settle into their boxes
          await page.screenshot({ path: path.join(ARTEFACTS, `${view}-${size.width}.png`), fullPage: true });
          const found = await unreadable(page);
          checked += await page.locator('main [data-field], main button, main .button').count();
          problems.push(...found.map((p) => `${view}: ${p}`));
        }
      } finally {
        await context.close();
      }
      expect(checked).toBeGreaterThan(30);
      expect(problems).toEqual([]);
    });
  }

  it('the revenue chart says what its axis draws, and its time axis repeats no label', async () => {
    const context = await browser.newContext({ viewport: WINDOWS[0] });
    const page = await context.newPage();
    try {
      for (const bucket of ['hour', 'day'] as const) {
        await page.goto(`${h.url}/#/seller/${seller}?bucket=${bucket}`);
        await page.locator('.chart:not(.empty)[data-x-ticks]').waitFor({ timeout: 15_000 });
        const r = await get<RevenueReport>(
          `/sellers/${seller}/revenue?bucket=${bucket}&days=${bucket === 'hour' ? 2 : 30}`,
        );
        // The chart draws from the bucket before the first with anything in it to the last such.
        const busy = r.series.map((b) => b.payments > 0 || b.settlements > 0);
        const first = busy.indexOf(true);
        const shown = busy.lastIndexOf(true) + 1 - Math.max(0, first - 1);
        const caption = (await page.locator('[data-field="chartSpan"]').textContent()) ?? '';
        expect(caption, bucket).toBe(`${shown} ${bucket}${shown === 1 ? '' : 's'}, by ${bucket}`);
        const ticks = ((await page.locator('.chart').getAttribute('data-x-ticks')) ?? '').split(' | ').filter(Boolean);
        expect(ticks.length, bucket).toBeGreaterThan(0);
        expect(new Set(ticks).size, `${bucket}: ${ticks.join(', ')}`).toBe(ticks.length);
        // The amounts' axis too: small amounts are not all rounded to the same "0.001".
        const amounts = ((await page.locator('.chart').getAttribute('data-y-ticks')) ?? '').split(' | ');
        expect(amounts.length, bucket).toBeGreaterThan(1);
        expect(new Set(amounts).size, `${bucket}: ${amounts.join(', ')}`).toBe(amounts.length);
      }
    } finally {
      await context.close();
    }
  });
});
