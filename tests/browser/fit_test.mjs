// The "What fits" view (docs/fit.md) against the real `vramplan serve`: the answer, its peak and
// the next value's peak as the page shows them equal POST /api/fit's answer for the same
// settings; the GPU-count question lists every count tried; a bad cap shows the core's error
// naming it; the answer opens in the training view.
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
  useServerAndBrowser,
} from './lib.mjs';

useServerAndBrowser();

const MICRO_BATCH = {
  question: 'micro_batch',
  model: 'Llama-3.1-8B',
  gpu: 'h100-80gb',
  seq_len: '8192',
  dp: '8',
  zero: '3',
  recompute: 'full',
};

/** Waits until the page's request has answered (an answer or an error). */
async function answered() {
  await page.waitForFunction(() => {
    const results = document.getElementById('fit-results');
    return results && !results.hasAttribute('aria-busy');
  });
}

function query(settings) {
  return new URLSearchParams({ view: 'fit', ...settings }).toString();
}

test('the largest micro-batch: the page shows the API’s answer', async () => {
  await page.goto(`${server.url}?${query(MICRO_BATCH)}`);
  await page.locator('#fit-headline').waitFor();
  await answered();
  const api = await postApi(server.url, '/api/fit', MICRO_BATCH);
  assert.equal(api.status, 200);
  assert.ok(api.body.fits && api.body.value >= 1);
  assert.equal(
    Number(await page.locator('#fit-headline').getAttribute('data-value')),
    api.body.value,
  );
  assert.equal(
    Number(await page.locator('#fit-peak').getAttribute('data-bytes')),
    api.body.at.device_bytes,
  );
  assert.equal(
    Number(await page.locator('#fit-next').getAttribute('data-bytes')),
    api.body.next.device_bytes,
  );
  assert.equal(await page.locator('#fit-why').textContent(), api.body.limiting);
  // The searched value's input is not sent while its question is asked.
  assert.equal(await page.locator('#fit-micro_batch').isDisabled(), true);
  const href = await page.locator('#fit-open-estimate').getAttribute('href');
  const linked = new URLSearchParams(href.split('?')[1]);
  assert.equal(linked.get('view'), 'training');
  assert.equal(Number(linked.get('micro_batch')), api.body.value);
  await screenshot(page, 'desktop-fit-micro-batch');
  assert.deepEqual(await accessibilityViolations(page), []);
});

test('the smallest GPU count lists every count tried', async () => {
  const settings = {
    question: 'gpus',
    model: 'Llama-3.1-8B',
    gpu: 'h100-80gb',
    seq_len: '32768',
    global_batch: '256',
  };
  await page.goto(`${server.url}?${query(settings)}`);
  await page.locator('#fit-counts').waitFor();
  await answered();
  const api = await postApi(server.url, '/api/fit', settings);
  assert.equal(api.status, 200);
  assert.equal(
    Number(await page.locator('#fit-headline').getAttribute('data-value')),
    api.body.value,
  );
  const shown = await page
    .locator('#fit-counts tbody tr')
    .evaluateAll((rows) => rows.map((r) => Number(r.cells[0].textContent)));
  assert.deepEqual(
    shown,
    api.body.counts.map((c) => c.gpus),
  );
  assert.ok((await page.locator('#fit-headline').textContent()).includes(api.body.layout));
  await screenshot(page, 'desktop-fit-gpus');
});

test('a bad cap shows the core’s error naming it', async () => {
  await page.goto(`${server.url}?${query(MICRO_BATCH)}`);
  await page.locator('#fit-headline').waitFor();
  await page.fill('#fit-up_to', '0');
  await page.click('#fit-run');
  await page.locator('#fit-error').waitFor();
  assert.match(await page.locator('#fit-error').textContent(), /up_to = 0/);
  assert.equal(await page.locator('#fit-headline').count(), 0);
});

test('the what-fits view works on a phone', async () => {
  const phone = await openPage(
    `${server.url}?${query({ ...MICRO_BATCH, question: 'gpus', global_batch: '256' })}`,
    PHONE,
  );
  await phone.waitForFunction(() => document.querySelector('#fit-counts tbody tr'));
  const overflow = await phone.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
  await screenshot(phone, 'fit-view-phone');
  await phone.close();
});
