// The web app as a user meets it: the real `vramplan serve`, Debian's chromium, and the API's own
// answers to compare against. Screenshots go to $VRAMPLAN_TEST_ARTIFACTS (default
// build/test-artifacts/).
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
  sweepSettled,
  takePageErrors,
  useServerAndBrowser,
} from './lib.mjs';

// Qwen2.5-14B has 40 attention heads: TP 2 is valid, TP 3 is not.
const PRESET = 'Qwen2.5-14B';
const SCENARIO = { model: PRESET, tp: 2, seq_len: 8192, dp: 4 };

useServerAndBrowser();

/** bytes / 2^30 to two places, ties to even, as the page and the CLI print it. */
function gibText(bytes) {
  const scaled = BigInt(bytes) * 100n;
  let units = scaled >> 30n;
  const rest = scaled - (units << 30n);
  if (rest > 1n << 29n || (rest === 1n << 29n && units % 2n === 1n)) units += 1n;
  const digits = units.toString().padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)} GiB`;
}

/** The peak as the page shows it: bytes from data-bytes, and the text beside them. */
async function displayedPeak(target = page) {
  const read = async (id) => {
    const node = target.locator(`#peak-${id}`);
    return { bytes: Number(await node.getAttribute('data-bytes')), text: await node.textContent() };
  };
  return {
    allocated: await read('allocated'),
    reserved: await read('reserved'),
    device: await read('device'),
    stage: await target.locator('#peak-stage').textContent(),
  };
}

async function assertPeakMatchesApi(scenario, target = page) {
  const api = await postApi(server.url, '/api/estimate', scenario);
  assert.equal(api.status, 200, JSON.stringify(api.body));
  const shown = await displayedPeak(target);
  for (const key of ['allocated', 'reserved', 'device']) {
    const bytes = api.body.peak[`${key}_bytes`];
    assert.equal(shown[key].bytes, bytes, `peak ${key} bytes`);
    assert.equal(shown[key].text, gibText(bytes), `peak ${key} text`);
  }
  assert.equal(shown.stage, api.body.peak.stage);
  return api.body;
}

async function errorOf(scenario) {
  const api = await postApi(server.url, '/api/estimate', scenario);
  assert.equal(api.status, 400, `expected the API to refuse ${JSON.stringify(scenario)}`);
  return api.body.error;
}

test('the page loads with a default scenario that matches the API', async () => {
  await page.goto(server.url);
  await resultsShown(page, '#peak-allocated');
  await assertPeakMatchesApi({ model: 'Llama-3.1-8B' });
});

// The server's Content-Security-Policy is in force: the app runs under it with no violation
// (every test fails on one), and what it forbids is refused and reported.
test('the Content-Security-Policy refuses inline scripts and other sites', async () => {
  const violated = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const seen = [];
        document.addEventListener('securitypolicyviolation', (e) => {
          seen.push(e.effectiveDirective);
          if (seen.length === 2) resolve(seen.sort());
        });
        const script = document.createElement('script');
        script.textContent = 'window.inlineRan = true';
        document.body.append(script);
        const image = document.createElement('img');
        image.src = 'http://evil.example/pixel.png';
        document.body.append(image);
      }),
  );
  assert.deepEqual(violated, ['img-src', 'script-src-elem']);
  assert.equal(await page.evaluate(() => window.inlineRan), undefined);
  // Both refusals reach the console, where every test looks for them (the events come apart).
  const reported = takePageErrors();
  for (let i = 0; i < 50 && reported.length < 2; i++) {
    await page.waitForTimeout(100);
    reported.push(...takePageErrors());
  }
  assert.equal(reported.length, 2, reported.join('\n'));
  await page.reload();
});

test('picking a preset and changing TP and sequence length: the peak equals the API', async () => {
  await page.selectOption('#f-model', PRESET);
  await page.fill('#f-tp', '2');
  await page.fill('#f-seq_len', '8192');
  await page.fill('#f-dp', '4');
  await settled(page);
  const estimate = await assertPeakMatchesApi(SCENARIO);

  // The breakdown table is the peak stage's rows, each with its formula and source.
  const peakStage = estimate.stages.find((s) => s.name === estimate.peak.stage);
  await assertBreakdownRows(peakStage.rows);
  // Fit cards: one per catalog GPU, the chosen one first with the core's verdict.
  assert.equal(await page.locator('.fit-card').count(), estimate.fit.length);
  assert.equal(
    await page.locator('.fit-card').first().getAttribute('data-gpu'),
    estimate.fit[0].gpu,
  );
  // Placeholders show what the core resolved for inputs left unset (gpus = tp 2 · dp 4).
  assert.equal(
    await page.getAttribute('#f-gpus', 'placeholder'),
    String(estimate.scenario.parallel.world_size),
  );
  assert.equal(
    await page.getAttribute('#f-num_layers', 'placeholder'),
    String(estimate.scenario.model.num_layers),
  );
  await screenshot(page, 'desktop-estimate');
});

test('the peak card shows the uncertainty band and the phase of the step', async () => {
  const api = await postApi(server.url, '/api/estimate', SCENARIO);
  const peak = api.body.peak;
  for (const key of ['allocated', 'reserved', 'device']) {
    const band = page.locator(`#peak-${key}-band`);
    assert.equal(Number(await band.getAttribute('data-low')), peak[`${key}_bytes_low`], key);
    assert.equal(Number(await band.getAttribute('data-high')), peak[`${key}_bytes_high`], key);
    const [low, high] = [peak[`${key}_bytes_low`], peak[`${key}_bytes_high`]].map(gibText);
    assert.equal(await band.textContent(), `likely ${low.replace(' GiB', '')}–${high}`);
  }
  assert.equal(await page.locator('#peak-phase').textContent(), peak.phase);
  const stage = api.body.stages.find((s) => s.name === peak.stage);
  const phases = await page
    .locator('#peak-phases [data-phase]')
    .evaluateAll((nodes) =>
      nodes.map((n) => ({ name: n.dataset.phase, allocated_bytes: Number(n.dataset.bytes) })),
    );
  assert.deepEqual(phases, stage.phases);
  assert.equal(
    await page.locator('#peak-phases strong').getAttribute('data-phase'),
    stage.peak_phase,
  );
});

test('the framework select applies a framework’s conventions, as the API does', async () => {
  const options = await page
    .locator('#f-framework option')
    .evaluateAll((nodes) => nodes.map((n) => n.value));
  assert.deepEqual(options, ['', 'megatron', 'torchtitan', 'deepspeed', 'nanotron', 'hf-trainer']);
  await page.selectOption('#f-framework', 'hf-trainer');
  await settled(page);
  await assertPeakMatchesApi({ ...SCENARIO, framework: 'hf-trainer' });
  assert.equal(new URL(page.url()).searchParams.get('framework'), 'hf-trainer');
  await page.selectOption('#f-framework', '');
  await settled(page);
  await assertPeakMatchesApi(SCENARIO);
});

test('a slow answer to older inputs never replaces the answer to the current ones', async () => {
  // Hold the answer for seq_len 1024 back until the answer for 2048 is shown.
  let release;
  const held = new Promise((resolve) => (release = resolve));
  await page.route('**/api/estimate', async (route) => {
    if (JSON.parse(route.request().postData()).seq_len === 1024) await held;
    await route.continue().catch(() => {}); // the page may have aborted it meanwhile
  });
  await page.fill('#f-seq_len', '1024');
  await page.waitForTimeout(400); // past the typing pause: the 1024 request is in flight
  await page.fill('#f-seq_len', '2048');
  await settled(page);
  await assertPeakMatchesApi({ ...SCENARIO, seq_len: 2048 });
  release();
  await page.waitForTimeout(300);
  await settled(page);
  await assertPeakMatchesApi({ ...SCENARIO, seq_len: 2048 });
  await page.unroute('**/api/estimate');
  await page.fill('#f-seq_len', '8192');
  await settled(page);
  await assertPeakMatchesApi(SCENARIO);
});

test('an invalid TP shows the core’s message beside the field, and no stale numbers', async () => {
  await page.fill('#f-tp', '3');
  await settled(page);
  const error = await errorOf({ ...SCENARIO, tp: 3 });
  assert.equal(error.field, 'tp');
  const message = page.locator('[data-field="tp"] #f-tp-error');
  assert.equal(await message.isVisible(), true);
  assert.equal(await message.textContent(), error.message);
  assert.equal(await page.getAttribute('#f-tp', 'aria-invalid'), 'true');
  assert.equal(
    await page.locator('#peak-allocated').count(),
    0,
    'no peak is shown for invalid inputs',
  );
  assert.equal(await page.locator('#results-error').textContent(), error.message);
  await page.locator('#f-tp-error').scrollIntoViewIfNeeded();
  await screenshot(page, 'desktop-invalid-tp');
  assert.deepEqual(await accessibilityViolations(page), [], 'axe-core audit with an error shown');

  await page.fill('#f-tp', '2');
  await page.fill('#f-seq_len', '-1');
  await settled(page);
  const seqError = await errorOf({ ...SCENARIO, seq_len: -1 });
  assert.equal(
    await page.locator('[data-field="seq_len"] #f-seq_len-error').textContent(),
    seqError.message,
  );
  assert.equal(await page.locator('#f-tp-error').isVisible(), false, 'the TP error is gone');

  await page.fill('#f-seq_len', '8192');
  await settled(page);
  assert.equal(await page.locator('#f-seq_len-error').isVisible(), false);
  await assertPeakMatchesApi(SCENARIO);
});

test('the shared URL restores the same scenario', async () => {
  const link = await sharedLink();
  const before = await displayedPeak();

  const other = await openPage(link);
  await resultsShown(other, '#peak-allocated');
  await assertFormValues(other, { model: PRESET, tp: '2', seq_len: '8192', dp: '4' });
  assert.deepEqual(await displayedPeak(other), before);
  await assertPeakMatchesApi(SCENARIO, other);
  await other.close();
});

test('the sweep over TP shows the API’s peaks and the invalid value’s error', async () => {
  await page.selectOption('#sweep-vary', 'tp');
  await page.fill('#sweep-values', '1, 2, 3, 4, 8');
  await sweepSettled(page);
  await page.waitForFunction(() => document.querySelectorAll('#sweep-table tbody tr').length === 5);
  const api = await postApi(server.url, '/api/sweep', {
    scenario: SCENARIO,
    vary: 'tp',
    values: [1, 2, 3, 4, 8],
  });
  assert.equal(api.status, 200, JSON.stringify(api.body));
  for (const point of api.body.points) {
    const row = page.locator(`#sweep-table tr[data-value="${point.value}"]`);
    if (point.error) {
      assert.equal(await row.locator('td').textContent(), point.error.message);
      continue;
    }
    const cells = await row
      .locator('td[data-bytes]')
      .evaluateAll((tds) => tds.map((td) => Number(td.dataset.bytes)));
    assert.deepEqual(cells, [
      point.peak.allocated_bytes,
      point.peak.reserved_bytes,
      point.peak.device_bytes,
    ]);
  }
  await page.locator('#sweep').screenshot({ path: path.join(artifactsDir, 'desktop-sweep.png') });
});

test('exports: the CSV equals the CLI’s, the JSON holds the API answer', async () => {
  const csv = await downloadOf('#export-csv');
  const cli = execFileSync(
    process.env.VRAMPLAN_BIN,
    [
      'estimate',
      '--model',
      PRESET,
      '--tp',
      '2',
      '--seq-len',
      '8192',
      '--dp',
      '4',
      '--format',
      'csv',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(csv.text, cli);
  writeFileSync(path.join(artifactsDir, csv.name), csv.text);

  const exported = JSON.parse((await downloadOf('#export-json')).text);
  assert.deepEqual(exported.input, SCENARIO);
  assert.deepEqual(exported.estimate, (await postApi(server.url, '/api/estimate', SCENARIO)).body);
});

test('the printed report hides the form and keeps inputs, peak, chart and table', async () => {
  await page.emulateMedia({ media: 'print' });
  assert.equal(await page.locator('aside.inputs').isVisible(), false);
  assert.equal(await page.locator('.scenario-summary').isVisible(), true);
  assert.match(await page.locator('.scenario-summary').textContent(), new RegExp(PRESET));
  for (const id of ['#peak-allocated', '#breakdown-chart', '#breakdown table'])
    assert.equal(await page.locator(id).isVisible(), true, id);
  await screenshot(page, 'print-report');
  await page.pdf({
    path: path.join(artifactsDir, 'report.pdf'),
    format: 'A4',
    printBackground: true,
  });
  await page.emulateMedia({ media: 'screen' });
});

test('a pasted config.json is estimated, and its errors show beside it', async () => {
  await page.check('#f-source-config');
  await page.waitForFunction(() =>
    document.getElementById('f-model_config').value.includes('hidden_size'),
  );
  const config = JSON.parse(await page.inputValue('#f-model_config'));
  await settled(page);
  const { model, ...rest } = SCENARIO;
  assert.equal(model, PRESET);
  await assertPeakMatchesApi({ ...rest, model_config: config });

  await page.fill('#f-model_config', '{"model_type": "llama", ');
  await settled(page);
  assert.match(await page.locator('#f-model-error').textContent(), /^config\.json: SyntaxError/);

  const broken = { ...config, num_attention_heads: 0 };
  await page.fill('#f-model_config', JSON.stringify(broken));
  await settled(page);
  const error = await errorOf({ ...rest, model_config: broken });
  assert.equal(await page.locator('#f-model-error').textContent(), error.message);
  assert.equal(await page.getAttribute('#f-model_config', 'aria-invalid'), 'true');
  await page.check('#f-source-preset');
  await settled(page);
  await assertPeakMatchesApi(SCENARIO);
});

test('keyboard and labels: every input is labelled and typing updates the results', async () => {
  assert.deepEqual(await accessibilityViolations(page), [], 'axe-core WCAG 2.1 A/AA audit');
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea')]
      .filter((c) => c.labels.length === 0 && !c.getAttribute('aria-label'))
      .map((c) => c.id || c.outerHTML.slice(0, 80)),
  );
  assert.deepEqual(unlabelled, []);
  await page.focus('#f-micro_batch');
  await page.keyboard.type('2');
  await page.keyboard.press('Tab');
  assert.equal(
    await page.evaluate(() => document.activeElement.getAttribute('aria-label')),
    'Reset Micro-batch size to its default',
  );
  await settled(page);
  await assertPeakMatchesApi({ ...SCENARIO, micro_batch: 2 });
  await page.keyboard.press('Enter'); // the focused reset button
  await settled(page);
  await assertPeakMatchesApi(SCENARIO);
});

test('on a phone the layout is one column without sideways scrolling', async () => {
  const phone = await openPage(page.url(), PHONE);
  await resultsShown(phone, '#peak-allocated');
  await assertPhoneLayout(phone);
  await assertPeakMatchesApi(SCENARIO, phone);
  assert.deepEqual(await accessibilityViolations(phone), [], 'axe-core audit on a phone');
  await phoneScreenshots(phone, 'phone');
  await phone.close();
});
