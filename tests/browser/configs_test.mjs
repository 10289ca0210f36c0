// Configs in and out of the web app, against the real `vramplan serve`: a Megatron-LM launch
// script pasted into the Training view fills the form, lists what was understood and ignored, and
// shows the same peak as POST /api/estimate with the same "from"; a vLLM command does the same in
// the Inference view; a paste the server refuses shows its error naming the key as written; the
// Plan view reads the script and writes its winner back as a Megatron-LM script. Screenshots go to
// $VRAMPLAN_TEST_ARTIFACTS (default build/test-artifacts/).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  accessibilityViolations,
  artifactsDir,
  context,
  downloadOf,
  openPage,
  page,
  PHONE,
  postApi,
  repoRoot,
  resultsShown,
  screenshot,
  server,
  settled,
  useServerAndBrowser,
} from './lib.mjs';

const fixture = (name) => readFileSync(path.join(repoRoot, 'tests/fixtures/imports', name), 'utf8');
const MEGATRON = fixture('megatron/llama3_8b_pretrain.sh');
const VLLM = fixture('vllm/llama_api_server.sh');

useServerAndBrowser();

/** Opens the paste box of `view`, pastes `text` and presses Read. */
async function paste(target, view, text) {
  const box = target.locator(`#${view}-paste`);
  if (!(await box.evaluate((details) => details.open))) await box.locator('summary').click();
  await target.fill(`#${view}-paste-text`, text);
  await target.click(`#${view}-paste-read`);
}

/** Waits until the paste box of `view` says how the reading went; resolves with its text. */
async function pasteMessage(target, view) {
  const message = target.locator(`#${view}-paste-message`);
  await target.waitForFunction((id) => {
    const node = document.getElementById(id);
    return node && !node.hidden && node.textContent !== 'Reading…';
  }, `${view}-paste-message`);
  return message.textContent();
}

/** The keys a list of the import report shows (understood, ignored). */
async function listedKeys(target, list) {
  return target
    .locator(`#import-${list} li`)
    .evaluateAll((items) => items.map((li) => li.dataset.key));
}

const shownBytes = async (target, id) =>
  Number(await target.locator(`#${id}`).getAttribute('data-bytes'));

test('a Megatron-LM script pasted into Training fills the form and shows what was read', async () => {
  await page.goto(`${server.url}?view=training`);
  await resultsShown(page, '#peak-device');
  await page.fill('#f-seq_len', '2048'); // a setting of the user's that the file does not reset
  await settled(page);
  await paste(page, 'training', MEGATRON);
  const summary = await pasteMessage(page, 'training');
  assert.match(summary, /^Read as megatron: \d+ keys understood, \d+ ignored/);
  await page.locator('#training-import-report').waitFor({ state: 'visible' });
  await settled(page);

  const api = await postApi(server.url, '/api/estimate', { from: MEGATRON });
  assert.equal(api.status, 200, JSON.stringify(api.body));
  assert.equal(await page.inputValue('#f-tp'), '2');
  assert.equal(await page.inputValue('#f-pp'), '2');
  assert.equal(await page.inputValue('#f-seq_len'), '8192', 'the file’s, not the earlier input');
  const understood = await listedKeys(page, 'understood');
  assert.ok(understood.includes('--tensor-model-parallel-size'), understood.join(' '));
  assert.deepEqual(
    understood,
    api.body.imported.understood.map((k) => k.key),
  );
  assert.deepEqual(
    await listedKeys(page, 'ignored'),
    api.body.imported.ignored.map((k) => k.key),
  );
  for (const id of ['peak-device', 'peak-allocated', 'peak-reserved']) {
    const key = id.replace('peak-', '') + '_bytes';
    assert.equal(await shownBytes(page, id), api.body.peak[key], `${id} = /api/estimate "from"`);
  }

  // The link holds the settings the paste made, not the text; the text stays for the session.
  const link = new URL(page.url());
  assert.equal(link.searchParams.get('from'), null);
  assert.equal(link.searchParams.get('tp'), '2');
  await page.reload();
  await resultsShown(page, '#peak-device');
  assert.equal(await page.inputValue('#training-paste-text'), MEGATRON);
  assert.equal(await shownBytes(page, 'peak-device'), api.body.peak.device_bytes);

  await paste(page, 'training', MEGATRON);
  await pasteMessage(page, 'training');
  await settled(page);
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'paste-training');
});

test('Export as framework config writes a Megatron-LM script that reads back to the same peak', async () => {
  await page.selectOption('#training-emit-format', 'megatron');
  await page.click('#training-emit-show');
  const code = page.locator('#training-emit-config');
  await code.waitFor();
  const config = await code.textContent();
  assert.match(config, /pretrain_gpt\.py/);
  const back = await postApi(server.url, '/api/estimate', { from: config });
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.equal(back.body.peak.device_bytes, await shownBytes(page, 'peak-device'));
  const file = await downloadOf('#training-emit-download');
  assert.equal(file.text, config);
  assert.match(file.name, /^vramplan-megatron-.*\.sh$/);

  // A changed input clears it: a copied config is never of other inputs.
  await page.fill('#f-micro_batch', '2');
  await settled(page);
  assert.equal(await code.count(), 0);
});

test('a paste the server refuses shows its error naming the key as written', async () => {
  // 24 GPUs split as tp 3 × pp 2 × dp 4, but 32 attention heads do not split over 3.
  const bad = MEGATRON.replace('TP=2', 'TP=3').replace('NUM_NODES=2', 'NUM_NODES=3');
  const api = await postApi(server.url, '/api/estimate', { from: bad });
  assert.equal(api.status, 400);
  assert.equal(api.body.error.field, '--tensor-model-parallel-size');
  const before = await page.inputValue('#f-micro_batch');
  await paste(page, 'training', bad);
  const message = await pasteMessage(page, 'training');
  assert.equal(message, `Not read: ${api.body.error.message}`);
  assert.match(message, /--tensor-model-parallel-size/);
  assert.equal(
    await page.getAttribute('#training-paste-message', 'data-field'),
    '--tensor-model-parallel-size',
  );
  assert.equal(await page.getAttribute('#training-paste-text', 'aria-invalid'), 'true');
  assert.equal(await page.inputValue('#f-micro_batch'), before, 'the form is left as it was');

  await paste(page, 'training', 'hello, this is no config');
  const unknown = await pasteMessage(page, 'training');
  assert.match(unknown, /^Not read: from = /);
});

test('a vLLM command pasted into Inference fills the form and writes the command back', async () => {
  await page.goto(`${server.url}?view=inference`);
  await resultsShown(page, '#infer-device');
  await paste(page, 'inference', VLLM);
  assert.match(await pasteMessage(page, 'inference'), /^Read as vllm: /);
  await page.locator('#inference-import-report').waitFor({ state: 'visible' });
  await settled(page);
  const api = await postApi(server.url, '/api/infer', { from: VLLM });
  assert.equal(api.status, 200, JSON.stringify(api.body));
  assert.equal(await page.inputValue('#f-context'), '8192');
  assert.equal(await page.inputValue('#f-kv_dtype'), 'fp8');
  assert.equal(await page.inputValue('#f-block_size'), '32');
  assert.equal(await page.inputValue('#f-max_num_seqs'), '128');
  assert.ok((await listedKeys(page, 'understood')).includes('--max_model_len'));
  assert.ok((await listedKeys(page, 'ignored')).includes('--port'));
  assert.equal(await shownBytes(page, 'infer-device'), api.body.device_bytes);
  assert.equal(
    Number(await page.locator('#infer-max-kv-tokens').getAttribute('data-value')),
    api.body.max_kv_tokens,
  );

  await page.selectOption('#inference-emit-format', 'vllm');
  await page.click('#inference-emit-show');
  const command = await page.locator('#inference-emit-config').textContent();
  assert.match(command, /vllm serve /);
  const back = await postApi(server.url, '/api/infer', { from: command });
  assert.equal(back.body.max_kv_tokens, api.body.max_kv_tokens);
  await screenshot(page, 'paste-inference');
});

test('the Plan view reads the script, searches its run and copies the winner as Megatron-LM', async () => {
  await page.goto(`${server.url}?view=plan`);
  await page.locator('#plan-table').waitFor();
  await paste(page, 'plan', MEGATRON);
  assert.match(await pasteMessage(page, 'plan'), /^Read as megatron: /);
  await page.waitForFunction(() => {
    const results = document.getElementById('plan-results');
    return results && !results.hasAttribute('aria-busy') && document.querySelector('#plan-table');
  });
  const api = await postApi(server.url, '/api/plan', { from: MEGATRON });
  assert.equal(api.status, 200, JSON.stringify(api.body));
  assert.equal(await page.inputValue('#plan-gpus'), '16');
  assert.equal(await page.inputValue('#plan-seq_len'), '8192');
  assert.equal(await page.inputValue('#plan-global_batch'), '128');
  assert.equal(await page.inputValue('#plan-tp'), '', 'the layout is searched');
  const ignored = await listedKeys(page, 'ignored');
  assert.ok(ignored.includes('--tensor-model-parallel-size'), ignored.join(' '));
  const layouts = await page
    .locator('#plan-table td.layout')
    .evaluateAll((cells) => cells.map((c) => c.textContent));
  assert.deepEqual(
    layouts,
    api.body.candidates.map((c) => c.layout),
  );

  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await page.selectOption('#plan-emit-format', 'megatron');
  await page.click('#plan-emit-show');
  const code = page.locator('#plan-emit-config');
  await code.waitFor();
  const config = await code.textContent();
  assert.match(config, /pretrain_gpt\.py/);
  // The fastest layouts are FSDP ones Megatron-LM cannot write as such: the server writes the
  // fastest it can, of the top 100, and its note says which.
  const emitted = await postApi(server.url, '/api/plan', {
    from: MEGATRON,
    emit: 'megatron',
    top: 100,
  });
  assert.equal(emitted.status, 200, JSON.stringify(emitted.body));
  assert.equal(config, emitted.body.config, 'the winner of the same search');
  if (emitted.body.note) assert.equal(await page.textContent('#plan-emit-note'), emitted.body.note);
  await page.click('#plan-emit-copy');
  await page.locator('#plan-emit-copied').filter({ hasText: /\S/ }).waitFor();
  assert.equal(await page.textContent('#plan-emit-copied'), 'Copied to the clipboard.');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), config);
  assert.deepEqual(await accessibilityViolations(page), []);
  await screenshot(page, 'paste-plan');
});

test('the paste and its report read on a phone', async () => {
  const phone = await openPage(`${server.url}?view=training`, PHONE);
  await resultsShown(phone, '#peak-device');
  await paste(phone, 'training', MEGATRON);
  await pasteMessage(phone, 'training');
  await settled(phone);
  const overflow = await phone.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
  await screenshot(phone, 'paste-training-phone');
  const report = phone.locator('#training-import-report');
  await report.scrollIntoViewIfNeeded();
  await report.screenshot({ path: path.join(artifactsDir, 'paste-report-phone.png') });
  await phone.close();
});
