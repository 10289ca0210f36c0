import { describe, expect, it } from 'vitest';
import { csvField, estimateToCsv, estimateToJson, exportName, inferenceToCsv } from './export';
import { exactBytes, gib, gibFixed, paramCount } from './format';
import type { Estimate, InferenceEstimate } from './types';

const estimate = {
  stages: [
    {
      name: 'stage 1 of 2 (first)',
      rows: [
        {
          component: 'weights',
          bytes: 8030257152,
          counts_toward: 'allocated',
          formula: '2 B/param (bf16) × 4,015,128,576 params',
          source: 'ZeRO §3',
        },
        {
          component: 'CUDA context',
          bytes: 629145600,
          counts_toward: 'device',
          formula: 'fixed "600 MiB"',
          source: 'x',
        },
      ],
    },
  ],
} as unknown as Estimate;

describe('CSV', () => {
  it('quotes like RFC 4180', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
  });

  it('has the CLI columns and one line per row', () => {
    expect(estimateToCsv(estimate)).toBe(
      'stage,component,bytes,gib,counts_toward,formula,source\n' +
        // 8030257152 / 2^30 = 7.47876... -> 7.4788
        'stage 1 of 2 (first),weights,8030257152,7.4788,allocated,"2 B/param (bf16) × 4,015,128,576 params",ZeRO §3\n' +
        // 629145600 / 2^30 = 0.5859375 -> 0.5859
        'stage 1 of 2 (first),CUDA context,629145600,0.5859,device,"fixed ""600 MiB""",x\n',
    );
  });
});

describe('serving CSV', () => {
  it('has the columns of `vramplan infer --format csv`, one line per row of the binding GPU', () => {
    const serving = {
      rows: [
        {
          component: 'attention weights (bf16)',
          bytes: 1342177280,
          counts_toward: 'allocated',
          formula: '671,088,640 × 2 B',
          source: 'IEEE 754',
        },
        {
          component: 'NCCL buffers',
          bytes: 536870912,
          counts_toward: 'device',
          formula: '1 group (tp) × 512.0 MiB',
          source: 'x',
        },
      ],
    } as unknown as InferenceEstimate;
    expect(inferenceToCsv(serving)).toBe(
      'component,bytes,gib,counts_toward,formula,source\n' +
        'attention weights (bf16),1342177280,1.2500,allocated,"671,088,640 × 2 B",IEEE 754\n' +
        'NCCL buffers,536870912,0.5000,device,1 group (tp) × 512.0 MiB,x\n',
    );
  });
});

describe('JSON and names', () => {
  it('bundles the input with the answer', () => {
    const parsed = JSON.parse(estimateToJson({ model: 'X', tp: 2 }, estimate));
    expect(parsed.input).toEqual({ model: 'X', tp: 2 });
    expect(parsed.estimate.stages[0].rows).toHaveLength(2);
  });

  it('names files after the scenario', () => {
    expect(exportName({ model: 'Llama-3.1-8B', tp: 2, seq_len: 8192 }, 'csv')).toBe(
      'vramplan-Llama-3.1-8B-tp2-seqlen8192.csv',
    );
    expect(exportName({ model: 'meta-llama/Llama 3' }, 'json')).toBe(
      'vramplan-meta-llama_Llama_3.json',
    );
    expect(exportName({ model_config: {} }, 'json')).toBe('vramplan-config.json');
    expect(
      exportName({ model: 'org/m@v1', tp: 4, context: 8192 }, 'csv', 'vramplan-infer', [
        'tp',
        'context',
      ]),
    ).toBe('vramplan-infer-org_m_v1-tp4-context8192.csv');
  });
});

describe('format', () => {
  it('shows GiB with two decimals and exact bytes', () => {
    expect(gib(166101327872)).toBe('154.69 GiB'); // 166101327872 / 2^30 = 154.693...
    expect(exactBytes(166101327872)).toBe('166,101,327,872 bytes');
    expect(paramCount(8030261248)).toBe('8.03B');
    expect(paramCount(525336576)).toBe('525.34M');
    expect(paramCount(12)).toBe('12');
  });

  it('rounds ties to even on the exact value, as the CLI does', () => {
    expect(gibFixed(2 ** 25, 4)).toBe('0.0312'); // 1/32 = 0.03125: a tie, 2 is even
    expect(gibFixed(3 * 2 ** 25, 4)).toBe('0.0938'); // 0.09375: a tie, 7 is odd
    expect(gibFixed(2 ** 27, 2)).toBe('0.12'); // 0.125
    expect(gibFixed(2 ** 27 + 1, 2)).toBe('0.13'); // just above the tie
    expect(gibFixed(0, 2)).toBe('0.00');
    expect(gibFixed(5 * 2 ** 30, 2)).toBe('5.00');
    expect(gibFixed(-(2 ** 29), 1)).toBe('-0.5');
  });
});
