// Hybrid and multimodal models in the web app (docs/models.md): a Mamba-2 hybrid's layer kinds
// and a vision-language model with images render in the training and inference views, each
// table equal to the API's rows.
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

test('a Mamba-2 hybrid: the activation rows name its layer kinds, as the API', async () => {
  await page.goto(server.url);
  await resultsShown(page, '#peak-allocated');
  await page.selectOption('#f-model', 'Nemotron-H-8B-Base-8K');
  await settled(page);
  const api = await postApi(server.url, '/api/estimate', { model: 'Nemotron-H-8B-Base-8K' });
  assert.equal(api.status, 200);
  const peak = api.body.stages[api.body.peak.stage_index];
  await assertBreakdownRows(peak.rows);
  const activations = page.locator('#breakdown tbody tr', { hasText: 'activations' }).first();
  assert.match(await activations.textContent(), /Mamba-2 layers/);
});

test('a vision-language model with two images: the encoder row and its note, as the API', async () => {
  await page.goto(server.url);
  await resultsShown(page, '#peak-allocated');
  await page.selectOption('#f-model', 'Qwen2.5-VL-7B-Instruct');
  await page.fill('#f-images', '2');
  await page.fill('#f-image_size', '1024x768');
  await settled(page);
  const api = await postApi(server.url, '/api/estimate', {
    model: 'Qwen2.5-VL-7B-Instruct',
    images: 2,
    image_size: '1024x768',
  });
  assert.equal(api.status, 200);
  const peak = api.body.stages[api.body.peak.stage_index];
  assert.ok(peak.rows.some((r) => r.component === 'vision encoder activations'));
  await assertBreakdownRows(peak.rows);
  assert.equal(
    Number(await page.locator('#peak-allocated').getAttribute('data-bytes')),
    api.body.peak.allocated_bytes,
  );
  await screenshot(page, 'desktop-vision-language');
});

test('serving a VLM: the cross-attention KV of its images, as the API', async () => {
  await page.goto(`${server.url}?view=inference`);
  await resultsShown(page, '#infer-device');
  await page.selectOption('#f-model', 'Llama-3.2-11B-Vision-Instruct');
  await page.fill('#f-images', '1');
  await page.fill('#f-context', '8192');
  await settled(page);
  const api = await postApi(server.url, '/api/infer', {
    model: 'Llama-3.2-11B-Vision-Instruct',
    images: 1,
    context: 8192,
    gpu_memory_utilization: 0.9,
  });
  assert.equal(api.status, 200);
  assert.ok(api.body.rows.some((r) => r.component === 'cross-attention KV (image tokens)'));
  await assertBreakdownRows(api.body.rows);
});
