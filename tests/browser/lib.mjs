// Shared by the browser tests: start the real `vramplan serve`, launch Debian's chromium through
// playwright-core (installed as a dev dependency of web/, no browser download), ask the API
// directly, and save screenshots as test artifacts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '../..');

const requireFromWeb = createRequire(path.join(repoRoot, 'web', 'package.json'));
const { chromium } = requireFromWeb('playwright-core');

export const artifactsDir = path.resolve(
  process.env.VRAMPLAN_TEST_ARTIFACTS ?? path.join(repoRoot, 'build', 'test-artifacts'),
);

/**
 * Starts `$VRAMPLAN_BIN serve --port 0 --quiet` and resolves with its URL once it listens.
 * `env` is added to the server's environment (e.g. HF_ENDPOINT for the fixture Hub).
 */
export async function startServer({ env = {} } = {}) {
  const bin = process.env.VRAMPLAN_BIN;
  if (!bin) throw new Error('set VRAMPLAN_BIN to the vramplan binary (tests/browser/run.sh does)');
  const child = spawn(bin, ['serve', '--port', '0', '--quiet'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  // A test file that fails before its after() hook (or is killed by ctest's timeout) must not
  // leave a server behind.
  process.on('exit', () => child.kill('SIGTERM'));
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server printed no URL: ${output}`)), 20000);
    const look = (chunk) => {
      output += chunk;
      const match = /http:\/\/[\d.]+:\d+\//.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[0]);
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  const health = await (await fetch(new URL('/api/health', url))).json();
  if (health.web_ui_built === false) {
    child.kill();
    throw new Error(
      'this vramplan binary has no web UI: run scripts/build_web.sh, then rebuild it',
    );
  }
  return { url, stop: () => child.kill('SIGTERM') };
}

/**
 * Starts tests/hub/fixture_server.py (a stand-in for the Hugging Face Hub on 127.0.0.1) and
 * returns its URL, the environment a server needs to use it (a fresh cache, no token) and stop().
 */
export async function startFixtureHub() {
  const script = path.join(repoRoot, 'tests', 'hub', 'fixture_server.py');
  const child = spawn('python3', [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  const urls = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`fixture Hub did not start: ${output}`)),
      30000,
    );
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const line = output.split('\n')[0];
      if (output.includes('\n')) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    });
    child.on('exit', (code) => reject(new Error(`fixture Hub exited with ${code}: ${output}`)));
  });
  const home = mkdtempSync(path.join(tmpdir(), 'vramplan-hf-'));
  const env = {
    HF_ENDPOINT: urls.hub,
    HF_HOME: home,
    HF_HUB_CACHE: path.join(home, 'hub'),
    VRAMPLAN_CACHE_DIR: path.join(home, 'vramplan'),
    HF_TOKEN: '',
    HF_HUB_OFFLINE: '',
    HUGGING_FACE_HUB_TOKEN: '',
    HF_TOKEN_PATH: '',
    TRANSFORMERS_OFFLINE: '',
    no_proxy: '127.0.0.1,localhost',
    NO_PROXY: '127.0.0.1,localhost',
  };
  return {
    url: urls.hub,
    env,
    stop: () => {
      child.kill('SIGTERM');
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** GET /api/... straight from the server. */
export async function getApi(baseUrl, endpoint) {
  const response = await fetch(new URL(endpoint, baseUrl));
  return { status: response.status, body: await response.json() };
}

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

/** A fresh chromium profile per run; close() removes it. */
export async function launchBrowser() {
  const profile = mkdtempSync(path.join(tmpdir(), 'vramplan-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1366, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** POST /api/... straight to the server: the answer the page must show. */
export async function postApi(baseUrl, endpoint, body) {
  const response = await fetch(new URL(endpoint, baseUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

export async function screenshot(page, name) {
  mkdirSync(artifactsDir, { recursive: true });
  const file = path.join(artifactsDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Runs the axe-core accessibility audit (WCAG 2 A and AA rules) on the page; resolves with the
 * violations as "rule: target" lines.
 */
export async function accessibilityViolations(page) {
  // Evaluated rather than added as a <script>: the server's Content-Security-Policy refuses
  // inline scripts, as it should; DevTools evaluation is outside the page's policy.
  if (!(await page.evaluate(() => 'axe' in window)))
    await page.evaluate(readFileSync(requireFromWeb.resolve('axe-core/axe.min.js'), 'utf8'));
  return page.evaluate(async () => {
    const result = await window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return result.violations.flatMap((v) =>
      v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')}`),
    );
  });
}

/** Waits until the results answer the current inputs (no request pending, none outdated). */
export async function settled(page) {
  await page.waitForFunction(() => {
    const results = document.getElementById('results');
    return results && !results.classList.contains('pending') && !results.hasAttribute('aria-busy');
  });
}

/** Waits until the sweep has answered the current inputs. */
export async function sweepSettled(page) {
  await page.waitForFunction(() => {
    const sweep = document.getElementById('sweep');
    return (
      sweep &&
      !sweep.classList.contains('pending') &&
      document.querySelector('#sweep-table tbody tr')
    );
  });
}

// The server, the browser's context and its first page, set by useServerAndBrowser()'s before
// hook. Importers see them once set: ES module exports are live bindings. Each test file runs in
// its own process under `node --test`, so each has its own.
export let server;
export let context;
export let page;

/**
 * Registers the hooks every browser test file shares: before the tests, start `vramplan serve`
 * (its environment plus what `serverEnv()` resolves with, asked for then) and chromium with one page; after each test,
 * fail on any uncaught error in the browser's pages; after them all, close both.
 */
/** Uncaught errors and policy violations in any page; every test ends by checking for none. */
const pageErrors = [];

/** The page errors so far, which then no longer fail the test (for tests that cause some). */
export function takePageErrors() {
  return pageErrors.splice(0);
}

export function useServerAndBrowser({ serverEnv = () => ({}) } = {}) {
  let browser;
  before(async () => {
    server = await startServer({ env: await serverEnv() });
    browser = await launchBrowser();
    context = browser.context;
    context.on('weberror', (error) => pageErrors.push(error.error().message));
    // What the Content-Security-Policy refused is an error of the app (chromium reports it on
    // the console).
    context.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text()))
        pageErrors.push(message.text());
    });
    page = await context.newPage();
  });
  afterEach(() => {
    assert.deepEqual(pageErrors.splice(0), [], 'errors in the page');
  });
  after(async () => {
    await browser?.close();
    server?.stop();
  });
}

/** A phone's screen, for pages opened with openPage(url, PHONE). */
export const PHONE = { width: 390, height: 844 };

/** Another page of the browser at `url`; `viewport` sizes it first (e.g. PHONE). */
export async function openPage(url, viewport = null) {
  const opened = await context.newPage();
  if (viewport) await opened.setViewportSize(viewport);
  await opened.goto(url);
  return opened;
}

/** Waits until `selector` is on the page and the results answer the current inputs. */
export async function resultsShown(target, selector) {
  await target.waitForSelector(selector);
  await settled(target);
}

/** On a phone: no sideways scrolling, the results below the inputs, the one-line summary shown. */
export async function assertPhoneLayout(phone) {
  assert.ok((await phone.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width);
  const inputs = await phone.locator('aside.inputs').boundingBox();
  const outputs = await phone.locator('.outputs').boundingBox();
  assert.ok(outputs.y >= inputs.y + inputs.height, 'results come below the inputs');
  assert.equal(await phone.locator('#mini-peak').isVisible(), true);
}

/** Screenshots of a phone page: the whole page as `name`, the results as `name`-results. */
export async function phoneScreenshots(phone, name) {
  await screenshot(phone, name);
  await phone.locator('#results').scrollIntoViewIfNeeded();
  await phone.screenshot({ path: path.join(artifactsDir, `${name}-results.png`) });
}

/** Clicks `selector` and resolves with the file it downloads: its text and suggested name. */
export async function downloadOf(selector, target = page) {
  const [download] = await Promise.all([target.waitForEvent('download'), target.click(selector)]);
  return { text: readFileSync(await download.path(), 'utf8'), name: download.suggestedFilename() };
}

/** The breakdown table shows `rows` (an answer's), each with its bytes, formula and source. */
export async function assertBreakdownRows(rows, target = page) {
  const shown = await target.locator('#breakdown tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      component: tr.cells[0].textContent,
      bytes: Number(tr.cells[1].dataset.bytes),
      formula: tr.cells[3].textContent,
      source: tr.cells[4].textContent,
    })),
  );
  assert.deepEqual(
    shown,
    rows.map(({ component, bytes, formula, source }) => ({ component, bytes, formula, source })),
  );
}

/** Clicks "Copy link" and resolves with the link it offers: the page's own URL. */
export async function sharedLink(target = page) {
  await target.click('#share-link');
  const link = await target.inputValue('#share-url');
  assert.equal(link, target.url());
  return link;
}

/** The scenario form's inputs (#f-<key>) hold `expected`: key -> value as typed. */
export async function assertFormValues(target, expected) {
  const shown = {};
  for (const key of Object.keys(expected)) shown[key] = await target.inputValue(`#f-${key}`);
  assert.deepEqual(shown, expected);
}
