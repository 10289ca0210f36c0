// Offload in the web app (docs/offload.md): the offload inputs, host rows in the breakdown table
// but not in the GPU chart's bars, the host total, and the node's host-memory verdict on the fit
// cards, each equal to the API's answer.
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
  dp: 8,
  zero: 3,
  offload_optimizer: 'cpu',
  offload_params: 'cpu',
};

test('ZeRO-3 with CPU offload: host rows, the host total and the node verdict match the API', async () => {
  await page.goto(server.url);
  await resultsShown(page, '#peak-allocated');
  await page.fill('#f-dp', '8');
  await page.fill('#f-zero', '3');
  await page.selectOption('#f-offload_optimizer', 'cpu');
  await page.selectOption('#f-offload_params', 'cpu');
  await settled(page);
  const api = await postApi(server.url, '/api/estimate', SCENARIO);
  assert.equal(api.status, 200);
  const peak = api.body.stages[api.body.peak.stage_index];
  assert.ok(api.body.peak.host_bytes > 0);
  assert.equal(
    Number(await page.locator('#peak-device').getAttribute('data-bytes')),
    api.body.peak.device_bytes,
  );
  await assertBreakdownRows(peak.rows);
  const hostRow = page.locator('.breakdown-table tr', { hasText: 'optimizer states (offloaded)' });
  assert.match(await hostRow.first().textContent(), /host/);
  assert.match(await page.locator('.breakdown-table tfoot').textContent(), /Host \(one rank\)/);
  const fit = api.body.fit[0].host;
  const card = page.locator(`.fit-card[data-gpu="${api.body.fit[0].gpu}"] .fit-host`);
  assert.match(await card.textContent(), new RegExp(fit.verdict === 'fits' ? 'Fits' : 'Tight|Out'));
  await screenshot(page, 'desktop-offload');
});
