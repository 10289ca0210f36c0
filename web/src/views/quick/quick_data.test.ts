import { describe, expect, it } from 'vitest';
import { exampleValues, quickBody } from './quick_data';

describe('quickBody', () => {
  it('sends the example and the filled inputs as typed', () => {
    expect(quickBody('serving', { params: '700M', layers: ' ', batch: '4' })).toEqual({
      example: 'serving',
      params: '700M',
      batch: '4',
    });
  });
  it('sends no example when none is picked', () => {
    expect(quickBody('', { params: '1.3B' })).toEqual({ params: '1.3B' });
  });
});

describe('exampleValues', () => {
  it('turns an example into the form’s text', () => {
    expect(
      exampleValues({
        name: 'x',
        title: 'x',
        calculator_gib: 1,
        settings: { params: '700M', batch: 8, mode: 'training' },
      }),
    ).toEqual({ params: '700M', batch: '8', mode: 'training' });
    expect(exampleValues(undefined)).toEqual({});
  });
});
