// "Fetch from Hub" in both views against the fixture Hub (tests/hub/fixture_server.py on
// 127.0.0.1; the server gets its URL as HF_ENDPOINT): the commit and checkpoint notes are shown,
// the fetched id becomes the scenario's model (and the URL's), and the numbers are the API's.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import {
  artifactsDir,
  getApi,
  openPage,
  page,
  postApi,
  resultsShown,
  server,
  settled,
  startFixtureHub,
  useServerAndBrowser,
} from './lib.mjs';

const MODEL = 'tiny-org/tiny-llama';

let hub;

useServerAndBrowser({
  serverEnv: async () => {
    hub = await startFixtureHub();
    return hub.env;
  },
});
after(() => {
  hub?.stop();
});

async function fetchFromHub(id) {
  await page.check('#f-source-hub');
  await page.fill('#f-hub-model', id);
  await page.click('#f-hub-fetch');
}

test('inference: fetching a Hub model shows its commit and estimates it', async () => {
  await page.goto(`${server.url}?view=inference`);
  await resultsShown(page, '#infer-device');
  await fetchFromHub(MODEL);
  await page.waitForSelector('#hub-commit');
  const described = await getApi(server.url, `/api/hub/${MODEL}`);
  assert.equal(described.status, 200, JSON.stringify(described.body));
  assert.equal(await page.locator('#hub-commit').textContent(), described.body.commit.slice(0, 12));
  assert.equal(await page.getAttribute('#hub-commit', 'title'), described.body.commit);
  const notes = await page.locator('.hub-note').allTextContents();
  assert.ok(
    notes.some((n) => n.includes('checkpoint of tiny-org/tiny-llama')),
    notes.join('\n'),
  );
  await settled(page);
  const scenario = { model: MODEL, gpu_memory_utilization: 0.9 };
  const api = await postApi(server.url, '/api/infer', scenario);
  assert.equal(api.status, 200, JSON.stringify(api.body));
  assert.equal(
    Number(await page.getAttribute('#infer-weights', 'data-bytes')),
    api.body.weights_bytes,
  );
  assert.equal(
    Number(await page.getAttribute('#infer-max-kv-tokens', 'data-value')),
    api.body.max_kv_tokens,
  );
  assert.equal(new URL(page.url()).searchParams.get('model'), MODEL);
  await page.locator('aside.inputs').screenshot({ path: path.join(artifactsDir, 'hub-fetch.png') });

  // The link reopens the Hub model, described again.
  const other = await openPage(page.url());
  await resultsShown(other, '#hub-commit');
  assert.equal(await other.isChecked('#f-source-hub'), true);
  assert.equal(await other.inputValue('#f-hub-model'), MODEL);
  assert.equal(
    Number(await other.getAttribute('#infer-weights', 'data-bytes')),
    api.body.weights_bytes,
  );
  await other.close();
});

test('a gated model: the server’s refusal is shown beside the Hub field', async () => {
  const refused = await getApi(server.url, '/api/hub/gated-org/gated-llama');
  assert.equal(refused.status, 403);
  await fetchFromHub('gated-org/gated-llama');
  // Wait for the refusal itself: right after the click the form may not be pending yet, so a
  // settled form alone does not mean the answer has arrived.
  await page.waitForFunction(
    (message) => document.getElementById('f-model-error')?.textContent === message,
    refused.body.error.message,
  );
  await settled(page);
  assert.equal(await page.locator('#f-model-error').textContent(), refused.body.error.message);
  assert.equal(await page.getAttribute('#f-hub-model', 'aria-invalid'), 'true');
  assert.equal(await page.locator('#infer-device').count(), 0, 'no numbers for a refused model');
  // Typing alone changes nothing until Fetch, and the form says so.
  await page.fill('#f-hub-model', `${MODEL}@v1.0`);
  assert.match(await page.locator('#hub-pending').textContent(), /Press Fetch/);
  // A revision that does not exist, then a good id again.
  await fetchFromHub(`${MODEL}@no-such-branch`);
  // The previous (gated) message stays until the new answer arrives: wait for it, not a pause.
  await page.waitForFunction(() =>
    document.querySelector('#f-model-error')?.textContent?.includes('no-such-branch'),
  );
  await settled(page);
  assert.match(await page.locator('#f-model-error').textContent(), /no-such-branch/);
  await fetchFromHub(`${MODEL}@v1.0`);
  await page.waitForSelector('#hub-commit');
  await settled(page);
  assert.equal(new URL(page.url()).searchParams.get('model'), `${MODEL}@v1.0`);
  assert.equal(await page.locator('#f-model-error').isVisible(), false);
  assert.equal(await page.locator('#hub-pending').isVisible(), false);
});

test('training: the fetched model is estimated, peak and checkpoint as the API says', async () => {
  await page.goto(`${server.url}?view=training`);
  await resultsShown(page, '#peak-allocated');
  await fetchFromHub(MODEL);
  await page.waitForSelector('#hub-commit');
  await settled(page);
  const api = await postApi(server.url, '/api/estimate', { model: MODEL });
  assert.equal(api.status, 200, JSON.stringify(api.body));
  assert.equal(
    Number(await page.getAttribute('#peak-allocated', 'data-bytes')),
    api.body.peak.allocated_bytes,
  );
  const warnings = await page.locator('#warnings li').allTextContents();
  assert.deepEqual(warnings, api.body.warnings);
  assert.equal(new URL(page.url()).searchParams.get('model'), MODEL);
});
