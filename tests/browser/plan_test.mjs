// The plan view against the real `vramplan serve`: the top layouts shown are /api/plan's answer,
// a bad GPU count shows the core's error beside the field, and a candidate's "open in estimate
// view" link opens the training view on the same peak as /api/estimate for its scenario.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  accessibilityViolations,
  openPage,
  page,
  PHONE,
  postApi,
  screenshot,
  server,
  settled,
  useServerAndBrowser,
} from './lib.mjs';

// Llama-3.1-8B on 16 H100: a search of thousands of layouts, well under a second.
const SEARCH = {
  model: 'Llama-3.1-8B',
  gpus: 16,
  gpu: 'h100-80gb',
  seq_len: 4096,
  global_batch: 64,
  top: 5,
};

useServerAndBrowser();

/** Waits until the search the page started has answered (results or an error). */
async function searched() {
  await page.waitForFunction(() => {
    const results = document.getElementById('plan-results');
    return results && !results.hasAttribute('aria-busy');
  });
}

/** The table as shown: layout and its equivalents, tokens/s text and value, peak bytes, per row. */
async function shownRows() {
  return page.locator('#plan-table tbody tr').evaluateAll((rows) =>
    rows.map((row) => ({
      layout: row.querySelector('td.layout > code').textContent,
      equivalents: Array.from(row.querySelectorAll('td.layout .equivalent code')).map(
        (c) => c.textContent,
      ),
      tokensText: row.querySelector('td.tokens').textContent,
      tokens: Number(row.querySelector('td.tokens').getAttribute('data-value')),
      deviceBytes: Number(row.querySelector('td.peak').getAttribute('data-bytes')),
      link: row.querySelector('a.open-estimate').getAttribute('href'),
    })),
  );
}

test('a search shows the top layouts /api/plan answers', async () => {
  await page.goto(`${server.url}?view=plan`);
  await page.selectOption('#plan-model', SEARCH.model);
  await page.selectOption('#plan-gpu', SEARCH.gpu);
  for (const key of ['gpus', 'seq_len', 'global_batch', 'top'])
    await page.fill(`#plan-${key}`, String(SEARCH[key]));
  await page.click('#plan-run');
  await searched();
  await page.locator('#plan-table').waitFor();

  const api = await postApi(server.url, '/api/plan', SEARCH);
  assert.equal(api.status, 200, JSON.stringify(api.body));
  const rows = await shownRows();
  assert.equal(rows.length, api.body.candidates.length);
  assert.ok(rows.length > 0);
  rows.forEach((row, i) => {
    const candidate = api.body.candidates[i];
    assert.equal(row.layout, candidate.layout, `layout ${i + 1}`);
    assert.deepEqual(row.equivalents, candidate.equivalents ?? [], `equivalents ${i + 1}`);
    assert.equal(row.tokens, candidate.tokens_per_s_per_gpu, `tokens/s ${i + 1}`);
    assert.equal(
      row.tokensText,
      Math.round(candidate.tokens_per_s_per_gpu).toLocaleString('en-US'),
      `tokens/s text ${i + 1}`,
    );
    assert.equal(row.deviceBytes, candidate.peak.device_bytes, `peak ${i + 1}`);
  });
  assert.equal(await page.locator('#plan-why').textContent(), api.body.why);
  assert.match(
    await page.locator('#plan-status').textContent(),
    new RegExp(`^${api.body.evaluated.toLocaleString('en-US')} layouts evaluated`),
  );
  assert.equal(await page.locator('#plan-chart').count(), 1);

  // The URL holds the inputs: reopening it reruns the same search.
  const shared = new URL(page.url());
  assert.equal(shared.searchParams.get('view'), 'plan');
  assert.equal(shared.searchParams.get('gpus'), String(SEARCH.gpus));
  assert.equal(shared.searchParams.get('global_batch'), String(SEARCH.global_batch));
  await page.goto(shared.href);
  await searched();
  await page.locator('#plan-table').waitFor();
  assert.equal((await shownRows())[0].layout, api.body.candidates[0].layout);

  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'plan-view');
});

test('an invalid GPU count shows the core error beside the field', async () => {
  await page.fill('#plan-gpus', '0');
  await page.click('#plan-run');
  await searched();
  const api = await postApi(server.url, '/api/plan', { ...SEARCH, gpus: 0 });
  assert.equal(api.status, 400);
  assert.equal(api.body.error.field, 'gpus');
  const message = page.locator('#plan-gpus-error');
  await message.waitFor({ state: 'visible' });
  assert.equal(await message.textContent(), api.body.error.message);
  assert.equal(await page.locator('#plan-gpus').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#plan-table').count(), 0, 'no stale results are shown');
  await page.fill('#plan-gpus', String(SEARCH.gpus));
  await page.click('#plan-run');
  await searched();
  await page.locator('#plan-table').waitFor();
  assert.equal(await message.isVisible(), false);
});

test("a candidate's estimate link opens the training view on the same peak", async () => {
  const rows = await shownRows();
  const second = rows[Math.min(1, rows.length - 1)];
  await page.click(`#plan-table tbody tr[data-rank="${rows.indexOf(second) + 1}"] a.open-estimate`);
  await page.waitForURL(/view=training/);
  await settled(page);
  const scenario = (await postApi(server.url, '/api/plan', SEARCH)).body.candidates[
    rows.indexOf(second)
  ].scenario;
  const estimate = await postApi(server.url, '/api/estimate', scenario);
  assert.equal(estimate.status, 200, JSON.stringify(estimate.body));
  assert.equal(estimate.body.peak.device_bytes, second.deviceBytes, 'planner peak = estimate');
  const shown = Number(await page.locator('#peak-device').getAttribute('data-bytes'));
  assert.equal(shown, estimate.body.peak.device_bytes);
});

test('a framework limits the search to the layouts it runs', async () => {
  await page.goto(`${server.url}?view=plan`);
  await page.selectOption('#plan-model', SEARCH.model);
  await page.selectOption('#plan-gpu', SEARCH.gpu);
  for (const key of ['gpus', 'seq_len', 'global_batch', 'top'])
    await page.fill(`#plan-${key}`, String(SEARCH[key]));
  await page.selectOption('#plan-framework', 'nanotron');
  await page.click('#plan-run');
  await searched();
  await page.locator('#plan-table').waitFor();
  const api = await postApi(server.url, '/api/plan', { ...SEARCH, framework: 'nanotron' });
  assert.equal(api.status, 200);
  const rows = await shownRows();
  assert.deepEqual(
    rows.map((r) => r.layout),
    api.body.candidates.map((c) => c.layout),
  );
  for (const row of rows) assert.match(row.layout, /zero[01]$/, 'nanotron has ZeRO-1 at most');

  await page.click('form.plan-form details summary'); // the fixed dimensions fold open
  await page.selectOption('#plan-zero', '2');
  await page.click('#plan-run');
  await searched();
  const refused = await postApi(server.url, '/api/plan', {
    ...SEARCH,
    framework: 'nanotron',
    zero: 2,
  });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.field, 'zero');
  const message = page.locator('#plan-zero-error');
  await message.waitFor({ state: 'visible' });
  assert.equal(await message.textContent(), refused.body.error.message);
});

test('the plan view works on a phone', async () => {
  const phone = await openPage(
    `${server.url}?view=plan&model=Llama-3.1-8B&gpus=16&global_batch=64`,
    PHONE,
  );
  await phone.waitForFunction(() => document.querySelector('#plan-table tbody tr'));
  const overflow = await phone.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
  await screenshot(phone, 'plan-view-phone');
  await phone.close();
});

// Llama-3.1-8B trained in full on one 40 GB A100: nothing fits with everything on the GPU, so the
// planner searches again with offload and says so (docs/offload.md "The planner").
test('when nothing fits, the search offloads and the page says so', async () => {
  const body = { model: 'Llama-3.1-8B', gpus: 1, gpu: 'a100-40gb', seq_len: 4096, global_batch: 8 };
  await page.goto(`${server.url}?view=plan`);
  await page.selectOption('#plan-model', body.model);
  await page.selectOption('#plan-gpu', body.gpu);
  for (const key of ['gpus', 'seq_len', 'global_batch'])
    await page.fill(`#plan-${key}`, String(body[key]));
  await page.click('#plan-run');
  await searched();
  await page.locator('#plan-table').waitFor();
  const api = await postApi(server.url, '/api/plan', body);
  assert.equal(api.status, 200, JSON.stringify(api.body));
  assert.ok(api.body.offload_search.ran);
  const rows = await shownRows();
  assert.equal(rows[0].layout, api.body.candidates[0].layout);
  assert.match(rows[0].layout, /offload=optimizer:/);
  assert.equal(await page.locator('#plan-why').textContent(), api.body.why);
  assert.match(api.body.why, /^No layout fits with everything on the GPU/);

  await page.selectOption('#plan-offload_search', 'never');
  await page.click('#plan-run');
  await searched();
  await page.locator('#plan-no-fit').waitFor();
  assert.equal(await page.locator('#plan-table').count(), 0);
});

// The space of fitting layouts (docs/planner.md "The space"): every point /api/plan draws, the
// Pareto front marked, the top K ringed; a filter greys points out; a point opens its estimate.
test('the space chart shows the fitting layouts and opens one in the estimate view', async () => {
  await page.goto(`${server.url}?view=plan`);
  await page.selectOption('#plan-model', SEARCH.model);
  await page.selectOption('#plan-gpu', SEARCH.gpu);
  for (const key of ['gpus', 'seq_len', 'global_batch', 'top'])
    await page.fill(`#plan-${key}`, String(SEARCH[key]));
  await page.click('#plan-run');
  await searched();
  await page.locator('#plan-space-chart').waitFor();
  assert.equal(new URL(page.url()).searchParams.get('space'), null, 'the link stays the inputs');

  const api = await postApi(server.url, '/api/plan', { ...SEARCH, space: 1500 });
  assert.equal(api.status, 200, JSON.stringify(api.body));
  const space = api.body.space;
  assert.ok(space.fitting > 0 && space.shown === space.points.length, JSON.stringify(space.grid));
  const marks = page.locator('#plan-space-chart a.space-point');
  assert.equal(await marks.count(), space.shown);
  assert.equal(
    await page.locator('#plan-space-chart a.space-point.pareto').count(),
    space.pareto.length,
  );
  assert.ok(space.pareto.length > 0);
  assert.equal(
    await page.locator('#plan-space-chart a.space-point.ranked').count(),
    api.body.candidates.length,
  );
  assert.equal(
    await page.locator('#plan-space-pareto-line').count(),
    space.pareto.length > 1 ? 1 : 0,
  );
  // The fastest point is the winner, on the front.
  const first = page.locator('#plan-space-chart a.space-point[data-index="0"]');
  assert.equal(await first.getAttribute('data-layout'), api.body.candidates[0].layout);
  assert.match(await first.getAttribute('class'), /pareto/);
  assert.equal(await page.locator('#plan-why').textContent(), api.body.why, 'the why stays');

  // Switching off one value of a dimension greys out exactly the points that have it.
  const filter = page.locator('#plan-space-filters fieldset.space-filter').first();
  const dim = await filter.getAttribute('data-dim');
  const box = filter.locator('input[type=checkbox]').first();
  const value = await box.getAttribute('data-value');
  await box.uncheck();
  const valueOf = (p) =>
    String(
      dim === 'sharding' ? p.sharding : dim === 'offload' ? p.offload || 'none' : p.scenario[dim],
    );
  const expected = space.points.filter((p) => valueOf(p) === value).length;
  assert.ok(expected > 0 && expected < space.shown, `${dim}=${value}: ${expected}`);
  assert.equal(await page.locator('#plan-space-chart a.space-point.excluded').count(), expected);
  assert.match(await page.locator('#plan-space-count').textContent(), /greyed out/);
  await box.check();
  assert.equal(await page.locator('#plan-space-chart a.space-point.excluded').count(), 0);
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'plan-space');

  // A point off the top K, clicked: the training view on that layout, at the planner's peak.
  const index = space.points.findIndex((p) => p.rank === 0 && !p.pareto);
  const chosen = index >= 0 ? index : space.points.length - 1;
  const point = space.points[chosen];
  await page
    .locator(`#plan-space-chart a.space-point[data-index="${chosen}"]`)
    .dispatchEvent('click');
  await page.waitForURL(/view=training/);
  await settled(page);
  const estimate = await postApi(server.url, '/api/estimate', {
    ...space.base_scenario,
    ...point.scenario,
  });
  assert.equal(estimate.status, 200, JSON.stringify(estimate.body));
  assert.equal(estimate.body.peak.device_bytes, point.device_bytes, 'planner peak = estimate');
  const shown = Number(await page.locator('#peak-device').getAttribute('data-bytes'));
  assert.equal(shown, point.device_bytes);
  assert.equal(new URL(page.url()).searchParams.get('tp'), String(point.scenario.tp));

  // From the keyboard: a Pareto point is in the tab order and opens with Enter.
  await page.goBack();
  await searched();
  const pareto = page.locator('#plan-space-chart a.space-point.pareto').first();
  await pareto.waitFor();
  assert.equal(await pareto.getAttribute('tabindex'), null);
  await pareto.focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(/view=training/);
  await settled(page);
});
