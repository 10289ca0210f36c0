// The inference (serving memory) view as a user meets it: the real `vramplan serve`, Debian's
// chromium, and /api/infer's own answers to compare against. Screenshots go to
// $VRAMPLAN_TEST_ARTIFACTS (default build/test-artifacts/).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  accessibilityViolations,
  artifactsDir,
  assertBreakdownRows,
  assertFormValues,
  assertPhoneLayout,
  downloadOf,
  openPage,
  page,
  PHONE,
  phoneScreenshots,
  postApi,
  resultsShown,
  screenshot,
  server,
  settled,
  sharedLink,
  useServerAndBrowser,
} from './lib.mjs';

// Qwen2.5-14B has 40 attention heads and 8 KV heads: TP 2 is valid, TP 3 is not.
const PRESET = 'Qwen2.5-14B';
const SCENARIO = { model: PRESET, tp: 2, context: 8192, gpu_memory_utilization: 0.9 };

useServerAndBrowser();

/** What the page shows: sizes from data-bytes, counts from data-value. */
async function displayed(target = page) {
  const bytes = async (id) => Number(await target.locator(`#${id}`).getAttribute('data-bytes'));
  const count = async (id) =>
    (await target.locator(`#${id}`).count())
      ? Number(await target.locator(`#${id}`).getAttribute('data-value'))
      : null;
  return {
    device: await bytes('infer-device'),
    weights: await bytes('infer-weights'),
    kvCache: await bytes('infer-kv-cache'),
    kvPerToken: await bytes('infer-kv-per-token'),
    maxKvTokens: await count('infer-max-kv-tokens'),
    maxSequences: await count('infer-max-sequences'),
  };
}

async function assertMatchesApi(scenario, target = page) {
  const api = await postApi(server.url, '/api/infer', scenario);
  assert.equal(api.status, 200, JSON.stringify(api.body));
  assert.deepEqual(await displayed(target), {
    device: api.body.device_bytes,
    weights: api.body.weights_bytes,
    kvCache: api.body.kv_cache_bytes,
    kvPerToken: api.body.kv_bytes_per_token,
    maxKvTokens: api.body.max_kv_tokens,
    maxSequences: api.body.max_sequences,
  });
  return api.body;
}

test('the inference view loads with a default scenario that matches the API', async () => {
  await page.goto(`${server.url}?view=inference`);
  await resultsShown(page, '#infer-device');
  assert.equal(await page.title(), 'vramplan · Inference');
  assert.equal(await page.getAttribute('#views a[aria-current="page"]', 'href'), '?view=inference');
  const body = await assertMatchesApi({ model: 'Llama-3.1-8B', gpu_memory_utilization: 0.9 });
  assert.ok(body.max_kv_tokens > 0);
});

test('changing the preset, TP and context: max KV tokens and weights equal the API', async () => {
  await page.selectOption('#f-model', PRESET);
  await page.fill('#f-tp', '2');
  await page.fill('#f-context', '8192');
  await settled(page);
  const body = await assertMatchesApi(SCENARIO);
  assert.equal(
    await page.locator('#infer-max-kv-tokens').textContent(),
    body.max_kv_tokens.toLocaleString('en-US'),
  );
  // The rows table is the binding GPU's rows, each with its formula and source.
  await assertBreakdownRows(body.rows);
  assert.equal(await page.locator('#capacity-formula').textContent(), body.capacity.formula);
  assert.equal(await page.locator('.fit-card').count(), body.fit.length);
  // Unset inputs show what the core resolved: KV dtype auto → bf16, vLLM's block of 16.
  assert.match(await page.locator('#f-kv_dtype option').first().textContent(), /bf16/);
  assert.equal(await page.getAttribute('#f-block_size', 'placeholder'), '16');
  await screenshot(page, 'desktop-inference');
});

test('per-module dtypes and the KV dtype change the answer as the API says', async () => {
  await page.selectOption('#f-kv_dtype', 'fp8');
  await page.selectOption('#f-mlp_dtype', 'int4');
  await settled(page);
  const body = await assertMatchesApi({ ...SCENARIO, kv_dtype: 'fp8', mlp_dtype: 'int4' });
  assert.equal(body.scenario.weights.mlp.format, 'int4');
  await page.selectOption('#f-kv_dtype', '');
  await page.selectOption('#f-mlp_dtype', '');
  await settled(page);
  await assertMatchesApi(SCENARIO);
});

test('an invalid value shows the core’s message beside the field, and no numbers', async () => {
  await page.fill('#f-tp', '3');
  await settled(page);
  const api = await postApi(server.url, '/api/infer', { ...SCENARIO, tp: 3 });
  assert.equal(api.status, 400);
  assert.equal(api.body.error.field, 'tp');
  assert.equal(
    await page.locator('[data-field="tp"] #f-tp-error').textContent(),
    api.body.error.message,
  );
  assert.equal(await page.getAttribute('#f-tp', 'aria-invalid'), 'true');
  assert.equal(await page.locator('#infer-device').count(), 0, 'no numbers for invalid inputs');
  assert.equal(await page.locator('#results-error').textContent(), api.body.error.message);
  await page.fill('#f-tp', '2');
  await page.fill('#f-gpu_memory_utilization', '1.5');
  await settled(page);
  const fraction = await postApi(server.url, '/api/infer', {
    ...SCENARIO,
    gpu_memory_utilization: 1.5,
  });
  assert.equal(fraction.status, 400);
  assert.equal(
    await page.locator('#f-gpu_memory_utilization-error').textContent(),
    fraction.body.error.message,
  );
  assert.equal(await page.locator('#f-tp-error').isVisible(), false);
  await page.fill('#f-gpu_memory_utilization', '0.9');
  await settled(page);
  await assertMatchesApi(SCENARIO);
});

test('the shared URL restores the inference scenario', async () => {
  assert.match(page.url(), /[?&]view=inference(&|$)/);
  const link = await sharedLink();
  const shown = await displayed();
  const other = await openPage(link);
  await resultsShown(other, '#infer-device');
  await assertFormValues(other, {
    model: PRESET,
    tp: '2',
    context: '8192',
    gpu_memory_utilization: '0.9',
  });
  assert.deepEqual(await displayed(other), shown);
  await assertMatchesApi(SCENARIO, other);
  await other.close();
});

test('exports: the CSV equals `vramplan infer --format csv`, the JSON holds the answer', async () => {
  const csv = await downloadOf('#export-csv');
  const cli = execFileSync(
    process.env.VRAMPLAN_BIN,
    ['infer', '--model', PRESET, '--tp', '2', '--context', '8192'].concat([
      '--gpu-memory-utilization',
      '0.9',
      '--format',
      'csv',
    ]),
    { encoding: 'utf8' },
  );
  assert.equal(csv.text, cli);
  assert.match(csv.name, /^vramplan-infer-Qwen2\.5-14B-tp2-context8192\.csv$/);
  writeFileSync(path.join(artifactsDir, csv.name), csv.text);
  const exported = JSON.parse((await downloadOf('#export-json')).text);
  assert.deepEqual(exported.input, SCENARIO);
  assert.deepEqual(exported.estimate, (await postApi(server.url, '/api/infer', SCENARIO)).body);
});

test('pipeline ranks are listed when PP > 1', async () => {
  await page.fill('#f-pp', '2');
  await settled(page);
  const body = await assertMatchesApi({ ...SCENARIO, pp: 2 });
  const ranks = await page.locator('#ranks tbody tr').count();
  assert.equal(ranks, body.ranks.length);
  await page.fill('#f-pp', '');
  await settled(page);
});

test('accessible, and on a phone one column without sideways scrolling', async () => {
  assert.deepEqual(await accessibilityViolations(page), [], 'axe-core WCAG 2.1 A/AA audit');
  const phone = await openPage(page.url(), PHONE);
  await resultsShown(phone, '#infer-device');
  await assertPhoneLayout(phone);
  await assertMatchesApi(SCENARIO, phone);
  assert.deepEqual(await accessibilityViolations(phone), [], 'axe-core audit on a phone');
  await phoneScreenshots(phone, 'phone-inference');
  await phone.close();
});
