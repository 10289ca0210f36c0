// The Quick view (docs/quick.md): each shipped example's coarse rows, total, the calculator's
// figure and the full estimate of the matching architecture as the page shows them, equal to
// POST /api/quick's answer; a typed input reaches the API; a bad one shows the core's error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  accessibilityViolations,
  getApi,
  page,
  postApi,
  resultsShown,
  screenshot,
  server,
  settled,
  useServerAndBrowser,
} from './lib.mjs';

useServerAndBrowser();

async function shownRows() {
  return page.locator('#quick-rows tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      component: tr.cells[0].textContent,
      bytes: Number(tr.cells[1].dataset.bytes),
      formula: tr.cells[2].textContent,
      source: tr.cells[3].textContent,
    })),
  );
}

async function assertShows(api) {
  assert.deepEqual(
    await shownRows(),
    api.rows.map(({ component, bytes, formula, source }) => ({
      component,
      bytes,
      formula,
      source,
    })),
  );
  assert.equal(
    Number(await page.locator('#quick-total').getAttribute('data-bytes')),
    api.total_bytes,
  );
  assert.equal(
    Number(await page.locator('#quick-full').getAttribute('data-bytes')),
    api.full_estimate.total_bytes,
  );
  assert.equal(
    Number(await page.locator('#quick-multiplier').getAttribute('data-value')),
    api.activation_multiplier.value,
  );
}

test('every example: the page shows the API’s rows, total and full estimate', async () => {
  const { body: options } = await getApi(server.url, '/api/quick/options');
  await page.goto(`${server.url}?view=quick`);
  await resultsShown(page, '#quick-total');
  for (const example of options.examples) {
    await page.selectOption('#f-example', example.name);
    await settled(page);
    await page.waitForFunction(
      (name) => new URL(window.location.href).searchParams.get('example') === name,
      example.name,
    );
    await settled(page);
    const api = await postApi(server.url, '/api/quick', { example: example.name });
    assert.equal(api.status, 200);
    await assertShows(api.body);
    assert.equal(
      Number(await page.locator('#quick-calculator').getAttribute('data-gib')),
      example.calculator_gib,
    );
    await screenshot(page, `desktop-quick-${example.name}`);
  }
  assert.deepEqual(await accessibilityViolations(page), []);
});

test('a typed input reaches the API; a bad one shows the core’s error', async () => {
  await page.goto(`${server.url}?view=quick&example=medium-training`);
  await resultsShown(page, '#quick-total');
  await page.fill('#f-batch', '2');
  await page.fill('#f-activation_multiplier', '12');
  await settled(page);
  const api = await postApi(server.url, '/api/quick', {
    example: 'medium-training',
    batch: 2,
    activation_multiplier: 12,
  });
  await assertShows(api.body);
  await page.fill('#f-params', 'lots');
  await settled(page);
  const error = page.locator('#quick-error');
  await error.waitFor({ state: 'visible' });
  assert.match(await error.textContent(), /params = lots.*700M, 1\.3B/);
});
