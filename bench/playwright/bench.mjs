// Playwright baseline for the Go CDP client's benchmarks: the same Chromium,
// the same flags, the same page, the same operations.
//
// Usage: node bench.mjs [--n 20] [--warmup 3] [--cold-n 5] [--chromium /usr/bin/chromium]
//
// stdout: one JSON object, operation -> median milliseconds.
// stderr: the run's context (versions, page URL, sizes, min/max per operation).

import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-site-isolation-trials',
  '--disable-features=IsolateOrigins,site-per-process',
];
const VIEWPORT = { width: 1280, height: 800 };

function parseArgs(argv) {
  const opts = { n: 20, warmup: 3, coldN: 5, chromium: '/usr/bin/chromium' };
  const names = { '--n': 'n', '--warmup': 'warmup', '--cold-n': 'coldN', '--chromium': 'chromium' };
  for (let i = 0; i < argv.length; i++) {
    let [flag, value] = argv[i].split(/=(.*)/s, 2);
    const key = names[flag];
    if (!key) {
      if (flag === '-h' || flag === '--help') {
        console.error('usage: node bench.mjs [--n 20] [--warmup 3] [--cold-n 5] [--chromium /usr/bin/chromium]');
        process.exit(0);
      }
      throw new Error(`unknown argument ${argv[i]}`);
    }
    if (value === undefined) value = argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (key === 'chromium') {
      opts.chromium = value;
    } else {
      const num = Number(value);
      if (!Number.isInteger(num) || num < (key === 'warmup' ? 0 : 1)) throw new Error(`bad ${flag}: ${value}`);
      opts[key] = num;
    }
  }
  return opts;
}

// Serves page2000.html at / from 127.0.0.1 on an ephemeral port.
async function startServer() {
  const body = await readFile(new URL('./page2000.html', import.meta.url));
  const server = createServer((req, res) => {
    if (req.url === '/' || req.url === '/page2000.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, 'cache-control': 'no-store' });
      res.end(body);
    } else {
      res.writeHead(404, { 'content-length': 0 });
      res.end();
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return { server, url: `http://127.0.0.1:${server.address().port}/` };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const round = (x) => Math.round(x * 1000) / 1000;

// Runs fn warmup times untimed, then n times timed; returns the samples in ms.
async function measure(warmup, n, fn) {
  for (let i = 0; i < warmup; i++) await fn();
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return samples;
}

const launch = (opts) => chromium.launch({ executablePath: opts.chromium, headless: true, args: FLAGS });

async function openPage(browser, url) {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'load' });
  return { context, page };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const { server, url } = await startServer();
  const results = {};
  const spread = {};
  const record = (name, samples) => {
    results[name] = round(median(samples));
    spread[name] = { n: samples.length, min: round(Math.min(...samples)), max: round(Math.max(...samples)) };
  };

  const browser = await launch(opts);
  try {
    let { context, page } = await openPage(browser, url);
    const elements = await page.evaluate(() => document.querySelectorAll('*').length);

    record('screenshot', await measure(opts.warmup, opts.n, () => page.screenshot({ type: 'png' })));

    const cdp = await context.newCDPSession(page);
    let axNodes = 0;
    record('ax_snapshot', await measure(opts.warmup, opts.n, async () => {
      const { nodes } = await cdp.send('Accessibility.getFullAXTree');
      axNodes = nodes.length;
    }));
    // The same answers Proctor's tree joins: the AX tree and the DOM snapshot
    // with layout, asked for together (the AX tree first), both parsed.
    record('ax_layout', await measure(opts.warmup, opts.n, async () => {
      await Promise.all([
        cdp.send('Accessibility.getFullAXTree'),
        cdp.send('DOMSnapshot.captureSnapshot', { computedStyles: ['visibility'] }),
      ]);
    }));
    // What an observation needs, all at once: the screenshot, the AX tree
    // and the DOM snapshot.
    record('observation', await measure(opts.warmup, opts.n, async () => {
      await Promise.all([
        page.screenshot({ type: 'png' }),
        cdp.send('Accessibility.getFullAXTree'),
        cdp.send('DOMSnapshot.captureSnapshot', { computedStyles: ['visibility'] }),
      ]);
    }));
    await cdp.detach();

    let ariaLines = null;
    let aiLines = null;
    if (typeof page.locator('body').ariaSnapshot === 'function') {
      record('aria_snapshot', await measure(opts.warmup, opts.n, async () => {
        const yaml = await page.locator('body').ariaSnapshot();
        ariaLines = yaml.split('\n').length;
      }));
    }
    // Playwright's own accessibility snapshot for agents: element
    // references, iframes included, and each element's box, which is what
    // Proctor's tree gives (roles, names, ids, boxes, frames).
    if (typeof page.ariaSnapshot === 'function') {
      record('aria_snapshot_ai', await measure(opts.warmup, opts.n, async () => {
        const yaml = await page.ariaSnapshot({ mode: 'ai', boxes: true });
        aiLines = yaml.split('\n').length;
      }));
    }

    let clicks = Number(await page.textContent('#count'));
    record('click', await measure(opts.warmup, opts.n, async () => {
      clicks += 1;
      await page.click('#target');
      await page.waitForFunction((want) => document.getElementById('count').textContent === want, String(clicks));
    }));

    record('context_reset', await measure(opts.warmup, opts.n, async () => {
      await context.close();
      ({ context, page } = await openPage(browser, url));
    }));
    await context.close();

    console.error(JSON.stringify({
      playwright_core: createRequire(import.meta.url)('playwright-core/package.json').version,
      browser: `${opts.chromium} ${browser.version()}`,
      url,
      viewport: VIEWPORT,
      n: opts.n,
      warmup: opts.warmup,
      dom_elements: elements,
      ax_nodes: axNodes,
      aria_snapshot_lines: ariaLines,
      aria_snapshot_ai_lines: aiLines,
      cpus: cpus().length,
      loadavg_1m: round(loadavg()[0]),
    }));
  } finally {
    await browser.close();
  }

  // Whole-browser round trip: launch, new page, goto, close. One warm-up so the
  // binary and its libraries are in the page cache.
  record('cold_start', await measure(Math.min(opts.warmup, 1), opts.coldN, async () => {
    const b = await launch(opts);
    try {
      const page = await b.newPage({ viewport: VIEWPORT });
      await page.goto(url, { waitUntil: 'load' });
    } finally {
      await b.close();
    }
  }));

  server.close();
  console.error(JSON.stringify({ spread_ms: spread }));
  console.log(JSON.stringify(results));
}

main().catch((err) => {
  console.error(err?.stack || String(err));
  process.exit(1);
});
