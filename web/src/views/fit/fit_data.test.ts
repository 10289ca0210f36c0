import { describe, expect, it } from 'vitest';
import { fitBody, headline, missText, type FitAnswer } from './fit_data';

describe('fitBody', () => {
  it('sends the filled inputs but not the value the question searches', () => {
    expect(
      fitBody({
        question: 'micro_batch',
        model: 'Llama-3.1-8B',
        micro_batch: '4',
        tp: ' ',
        dp: '8',
      }),
    ).toEqual({ question: 'micro_batch', model: 'Llama-3.1-8B', dp: '8' });
    expect(fitBody({ question: 'gpus', micro_batch: '2', global_batch: '64' })).toEqual({
      question: 'gpus',
      micro_batch: '2',
      global_batch: '64',
    });
  });
  it('sends seq_multiple with the sequence-length question only', () => {
    expect(fitBody({ question: 'seq_len', seq_len: '4096', seq_multiple: '1024' })).toEqual({
      question: 'seq_len',
      seq_multiple: '1024',
    });
    expect(fitBody({ question: 'micro_batch', seq_multiple: '1024' })).toEqual({
      question: 'micro_batch',
    });
  });
});

const ANSWER: FitAnswer = {
  question: 'micro_batch',
  model: 'Llama-3.1-8B',
  gpu: { id: 'h100-80gb', name: 'H100', usable_bytes: 85520809984 },
  headroom: 0.1,
  limit_bytes: 76968728985,
  fits: true,
  value: 6,
  unbounded: false,
  step: 1,
  up_to: 1048576,
  bounded_by: 'memory',
  at: null,
  next: {
    value: 7,
    fits: false,
    allocated_bytes: 0,
    reserved_bytes: 0,
    device_bytes: 78 * 2 ** 30,
    host_bytes: 0,
    peak_stage: 'all layers',
    micro_batch: 7,
    microbatches: 1,
    global_batch: 56,
    seq_len: 4096,
    in_flight_microbatches: 1,
    invalid: '',
  },
  miss_bytes: 2 ** 30,
  limiting: 'activations grow',
  note: '',
  evaluated: 6,
  seconds: 0.01,
  scenario: null,
  micro_batch: 0,
  microbatches: 1,
};

describe('answer words', () => {
  it('says the answer, or that nothing fits', () => {
    expect(headline(ANSWER)).toBe('Largest micro-batch that fits: 6');
    expect(headline({ ...ANSWER, fits: false, value: null })).toBe('Nothing fits.');
    expect(headline({ ...ANSWER, question: 'gpus', value: 16, layout: 'tp1 dp16' })).toBe(
      'Smallest GPU count with a layout that fits: 16 (tp1 dp16)',
    );
  });
  it('says by how much the next value misses', () => {
    expect(missText(ANSWER)).toBe('micro-batch 7 does not fit: 78.00 GiB, 1.00 GiB over the limit');
    expect(missText({ ...ANSWER, next: null })).toBeNull();
  });
});
