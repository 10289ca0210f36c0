// Serving offload in the web app (docs/offload.md, "Serving"): the offload inputs of the
// Inference view, the host card, host rows in the table but not in the GPU bar, and the KV
// cache's tiers, each equal to the API's answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertBreakdownRows,
  page,
  postApi,
  resultsShown,
  screenshot,
  server,
  settled,
  useServerAndBrowser,
} from './lib.mjs';

useServerAndBrowser();

const SCENARIO = {
  model: 'Llama-3.1-8B',
  gpu_memory_utilization: 0.9,
  cpu_offload_gib: 2,
  kv_offload_gib: 16,
};

test('vLLM weight and KV offload: host card, host rows and tiers match the API', async () => {
  await page.goto(`${server.url}?view=inference`);
  await resultsShown(page, '#infer-device');
  assert.match(await page.locator('body').textContent(), /Offload and host memory/);
  await page.fill('#f-gpu_memory_utilization', '0.9');
  await page.fill('#f-cpu_offload_gib', '2');
  await page.fill('#f-kv_offload_gib', '16');
  await settled(page);
  const api = await postApi(server.url, '/api/infer', SCENARIO);
  assert.equal(api.status, 200, JSON.stringify(api.body));
  assert.ok(api.body.host_bytes > 17.99 * 2 ** 30);
  assert.equal(
    Number(await page.locator('#infer-host').getAttribute('data-bytes')),
    api.body.host_bytes,
  );
  assert.equal(
    Number(await page.locator('#infer-device').getAttribute('data-bytes')),
    api.body.device_bytes,
  );
  assert.equal(
    Number(await page.locator('#infer-max-kv-tokens').getAttribute('data-value')),
    api.body.max_kv_tokens,
  );
  await assertBreakdownRows(api.body.rows);
  const hostRow = page.locator('.breakdown-table tr', { hasText: 'weights offloaded to CPU' });
  assert.match(await hostRow.first().textContent(), /host/);
  const tiers = page.locator('#kv-tiers li');
  assert.equal(await tiers.count(), api.body.kv_tiers.length);
  for (let i = 0; i < api.body.kv_tiers.length; i += 1) {
    assert.equal(await tiers.nth(i).getAttribute('data-tier'), api.body.kv_tiers[i].tier);
    assert.equal(
      Number(await tiers.nth(i).getAttribute('data-tokens')),
      api.body.kv_tiers[i].tokens,
    );
  }
  await screenshot(page, 'desktop-inference-offload');
});
