// The roofline view as a user meets it: the real `vramplan serve`, Debian's chromium, and
// /api/roofline's own answers (exactly `vramplan roofline --format json`) to compare against:
// every operation row, the step time and its parts, the points on the chart, errors beside the
// field they name, and the accessibility audit. Screenshots go to $VRAMPLAN_TEST_ARTIFACTS.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  accessibilityViolations,
  openPage,
  page,
  PHONE,
  postApi,
  resultsShown,
  screenshot,
  server,
  settled,
  useServerAndBrowser,
} from './lib.mjs';

const DEFAULT = { model: 'Llama-3.1-8B', gpus: 8, global_batch: 64 };

useServerAndBrowser();

/** What the page shows, read from the data-* attributes that carry the exact numbers. */
async function displayed(target = page) {
  return target.evaluate(() => {
    const number = (node, name) => Number(node.getAttribute(name));
    const rows = [...document.querySelectorAll('#roofline-ops tbody tr[data-op]')].map((tr) => ({
      op: tr.querySelector('th').textContent,
      flops: number(tr, 'data-flops'),
      bytes: number(tr, 'data-bytes'),
      intensity: number(tr, 'data-intensity'),
      bound: tr.getAttribute('data-bound'),
    }));
    const parts = Object.fromEntries(
      [...document.querySelectorAll('#step-table tr[data-part]')].map((tr) => [
        tr.getAttribute('data-part'),
        number(tr.querySelector('[data-seconds]'), 'data-seconds'),
      ]),
    );
    const value = (id) => number(document.getElementById(id), 'data-value');
    return {
      rows,
      parts,
      stepTime: value('roofline-step-time'),
      tokens: value('roofline-tokens'),
      mfu: value('roofline-mfu'),
      points: document.querySelectorAll('#roofline-chart .op-point').length,
      roofs: [...document.querySelectorAll('#roofline-chart [data-roof]')].map((r) =>
        r.getAttribute('data-roof'),
      ),
    };
  });
}

/** The page shows exactly /api/roofline's answer for `settings`; resolves with that answer. */
async function assertMatchesApi(settings, target = page) {
  const api = await postApi(server.url, '/api/roofline', settings);
  assert.equal(api.status, 200, JSON.stringify(api.body));
  const ops = api.body.sections.flatMap((s) => s.ops);
  const shown = await displayed(target);
  assert.deepEqual(
    shown.rows,
    ops.map((o) => ({
      op: o.op,
      flops: o.flops,
      bytes: o.bytes,
      intensity: o.intensity,
      bound: o.bound,
    })),
  );
  const step = api.body.step_time;
  assert.equal(shown.stepTime, step.step_time_s);
  assert.equal(shown.tokens, step.tokens_per_s_per_gpu);
  assert.equal(shown.mfu, step.mfu);
  for (const [key, seconds] of Object.entries(shown.parts)) assert.equal(seconds, step[key], key);
  assert.equal(Object.keys(shown.parts).length, 11, 'ten parts and the step');
  const onChart = ops.filter((o) => o.flops > 0 && o.intensity > 0 && o.roofline_s > 0).length;
  assert.equal(shown.points, onChart);
  assert.deepEqual(shown.roofs, ['matmul', 'attention', 'elementwise']);
  return api.body;
}

test('the roofline view loads its default scenario and shows the API’s answer', async () => {
  await page.goto(`${server.url}?view=roofline`);
  await resultsShown(page, '#roofline-step-time');
  assert.equal(await page.title(), 'vramplan · Roofline');
  assert.equal(await page.getAttribute('#views a[aria-current="page"]', 'href'), '?view=roofline');
  const body = await assertMatchesApi(DEFAULT);
  assert.ok(body.sections.flatMap((s) => s.ops).length >= 14);
  // Unset cluster inputs show the catalog's node.
  assert.equal(await page.getAttribute('#f-gpus_per_node', 'placeholder'), '8');
  await screenshot(page, 'roofline');
});

test('tensor parallelism and the cluster inputs: rows and step time equal the API', async () => {
  await page.fill('#f-tp', '2');
  await page.fill('#f-gpus_per_node', '4');
  await page.fill('#f-inter_node_gbps', '12.5');
  await settled(page);
  const body = await assertMatchesApi({
    ...DEFAULT,
    tp: 2,
    gpus_per_node: 4,
    inter_node_gbps: 12.5,
  });
  assert.deepEqual(body.cluster, {
    gpus_per_node: 4,
    intra_node_gbps: 450,
    inter_node_gbps: 12.5,
    host_link_gbps: 64,
    host_memory_gbps: 614,
    nvme_gbps: 25,
  });
  assert.match(page.url(), /view=roofline/);
  assert.match(page.url(), /gpus_per_node=4/);
});

test('a shared link reopens the same scenario', async () => {
  const opened = await openPage(page.url());
  await resultsShown(opened, '#roofline-step-time');
  await assertMatchesApi({ ...DEFAULT, tp: 2, gpus_per_node: 4, inter_node_gbps: 12.5 }, opened);
  await opened.close();
});

test('an invalid value shows the core’s message beside the field, and no numbers', async () => {
  await page.fill('#f-gpus_per_node', '0');
  await settled(page);
  const api = await postApi(server.url, '/api/roofline', {
    ...DEFAULT,
    tp: 2,
    gpus_per_node: 0,
    inter_node_gbps: 12.5,
  });
  assert.equal(api.status, 400);
  assert.equal(api.body.error.field, 'gpus_per_node');
  assert.equal(await page.locator('#f-gpus_per_node-error').textContent(), api.body.error.message);
  assert.equal(await page.getAttribute('#f-gpus_per_node', 'aria-invalid'), 'true');
  assert.equal(await page.locator('#roofline-step-time').count(), 0, 'no numbers');
  assert.equal(await page.locator('#results-error').textContent(), api.body.error.message);
  await page.fill('#f-gpus_per_node', '');
  // A capacity alone has no speeds: the roofline refuses it, beside its field.
  await page.fill('#f-gpu_memory_gib', '80');
  await settled(page);
  const capacity = await postApi(server.url, '/api/roofline', {
    ...DEFAULT,
    tp: 2,
    inter_node_gbps: 12.5,
    gpu_memory_gib: 80,
  });
  assert.equal(capacity.status, 400);
  assert.equal(capacity.body.error.field, 'gpu_memory_gib');
  assert.equal(
    await page.locator('#f-gpu_memory_gib-error').textContent(),
    capacity.body.error.message,
  );
  assert.equal(await page.locator('#f-gpus_per_node-error').isVisible(), false);
  await page.fill('#f-gpu_memory_gib', '');
  await page.fill('#f-tp', '');
  await page.fill('#f-inter_node_gbps', '');
  await settled(page);
  await assertMatchesApi(DEFAULT);
});

test('a MoE model with expert parallelism: grouped experts on the chart', async () => {
  await page.selectOption('#f-model', 'DeepSeek-V2-Lite');
  await page.fill('#f-ep', '8');
  await settled(page);
  const body = await assertMatchesApi({ ...DEFAULT, model: 'DeepSeek-V2-Lite', ep: 8 });
  assert.ok(body.sections.some((s) => s.ops.some((o) => o.kind === 'grouped matmul')));
  await page.selectOption('#f-model', 'Llama-3.1-8B');
  await page.fill('#f-ep', '');
  await settled(page);
  await assertMatchesApi(DEFAULT);
});

test('accessible, and on a phone without sideways scrolling', async () => {
  assert.deepEqual(await accessibilityViolations(page), [], 'axe-core WCAG 2.1 A/AA audit');
  const phone = await openPage(page.url(), PHONE);
  await resultsShown(phone, '#roofline-step-time');
  assert.ok((await phone.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width);
  await assertMatchesApi(DEFAULT, phone);
  assert.deepEqual(await accessibilityViolations(phone), [], 'axe-core audit on a phone');
  await screenshot(phone, 'phone-roofline');
  await phone.close();
});
