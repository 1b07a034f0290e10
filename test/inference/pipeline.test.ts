/**
 * The inference pipeline without a model: JSON ↔ tensors, shape fitting, preprocessing and
 * postprocessing, each against values computed by hand.
 */
import { describe, expect, it } from 'vitest';
import {
  fitShape,
  InferenceError,
  normalize,
  postprocess,
  preprocessInput,
  readInputSource,
  resizeNearest,
  softmax,
  toNested,
  toTensor,
  type AiConfig,
  type ModelOutput,
} from '../../runtime/index.js';

const config = (extra: Partial<AiConfig> = {}): AiConfig => ({
  model_name: 'm',
  runtime: 'custom',
  input_source: 'features',
  output_key: 'inference_result',
  timeout_ms: 5000,
  ...extra,
});
const vector = (data: number[]): ModelOutput => ({
  kind: 'tensor',
  name: 'y',
  tensor: { data, dims: [data.length] },
});

function inferenceError(fn: () => unknown): InferenceError {
  try {
    fn();
  } catch (error) {
    if (error instanceof InferenceError) return error;
    throw error;
  }
  throw new Error('expected an InferenceError');
}

describe('toTensor / toNested', () => {
  it('reads vectors, matrices and lone numbers, and nests them back', () => {
    expect(toTensor([1, 2, 3], 'x')).toEqual({ data: [1, 2, 3], dims: [3] });
    const m = toTensor(
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      'x',
    );
    expect(m).toEqual({ data: [1, 2, 3, 4, 5, 6], dims: [3, 2] });
    expect(toNested(m)).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    expect(toTensor(7, 'x')).toEqual({ data: [7], dims: [1] });
    expect(toNested({ data: [7], dims: [] })).toBe(7);
  });

  it('names the offending element of non-numeric, ragged and empty input', () => {
    const bad = (value: unknown) => inferenceError(() => toTensor(value, 'tx.features'));
    expect(bad([1, '2', 3]).message).toBe('tx.features[1] is a string ("2"); expected a number');
    expect(bad([[1, 2], [3]]).message).toBe(
      'tx.features[1] has 1 items where its siblings have 2 (arrays must be rectangular)',
    );
    expect(bad([[1, 2], 3]).message).toBe('tx.features[1] is the number 3; expected an array of 2');
    expect(bad([1, null]).message).toBe('tx.features[1] is null; expected a number');
    expect(bad([]).message).toBe('tx.features is an empty array');
    expect(bad({ a: 1 }).message).toBe('tx.features is an object; expected a number array');
    expect(bad(true).code).toBe('INFERENCE_INPUT_INVALID');
  });
});

describe('fitShape', () => {
  it('adds a batch dimension when the value has one fewer and the first is free or 1', () => {
    expect(fitShape([4], ['N', 4], 'x', 'features')).toEqual({ dims: [1, 4], batched: true });
    expect(fitShape([4], [1, 4], 'x', 'features')).toEqual({ dims: [1, 4], batched: true });
    expect(fitShape([2, 4], ['N', 4], 'x', 'features')).toEqual({ dims: [2, 4], batched: false });
    expect(fitShape([3, 5], ['h', 'w'], 'x', 'img')).toEqual({ dims: [3, 5], batched: false });
  });

  it('rejects sizes and ranks that do not fit, naming both shapes', () => {
    expect(inferenceError(() => fitShape([3], ['N', 4], 'features', 'x')).message).toBe(
      "features has shape [3]; model input 'x' expects [N, 4]",
    );
    expect(inferenceError(() => fitShape([4], [2, 4], 'f', 'x')).message).toContain('[2, 4]');
    expect(inferenceError(() => fitShape([1, 1, 4], ['N', 4], 'f', 'x')).code).toBe(
      'INFERENCE_INPUT_INVALID',
    );
  });
});

describe('preprocessing', () => {
  it('normalize: zero mean, unit population variance; constant input becomes zeros', () => {
    // mean 5, population variance ((9+1+1+9)/4) = 5
    const out = normalize({ data: [2, 4, 6, 8], dims: [4] });
    const s = Math.sqrt(5);
    expect(out.dims).toEqual([4]);
    [-3 / s, -1 / s, 1 / s, 3 / s].forEach((v, i) => expect(out.data[i]).toBeCloseTo(v, 12));
    expect(normalize({ data: [3, 3, 3], dims: [3] }).data).toEqual([0, 0, 0]);
  });

  it('resize: nearest neighbour, output i takes input floor(i × in / out)', () => {
    const image = { data: [...Array(16).keys()], dims: [4, 4] };
    expect(toNested(resizeNearest(image, [2, 2]))).toEqual([
      [0, 2],
      [8, 10],
    ]);
    expect(toNested(resizeNearest({ data: [1, 2, 3, 4], dims: [2, 2] }, [4, 3]))).toEqual([
      [1, 1, 2],
      [1, 1, 2],
      [3, 3, 4],
      [3, 3, 4],
    ]);
    expect(resizeNearest({ data: [5, 6, 7], dims: [3] }, [3]).data).toEqual([5, 6, 7]);
  });

  it('resizes to the declared sample shape, keeping free axes, per named input', () => {
    const inputs = [{ name: 'img', shape: ['N', 2, 'w'] as const }];
    const image = [
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
      [10, 11, 12],
    ];
    expect(preprocessInput(image, 'resize', inputs, 'image')).toEqual([
      [1, 2, 3],
      [7, 8, 9],
    ]);
    expect(preprocessInput({ img: image }, 'resize', inputs, 'image')).toEqual({
      img: [
        [1, 2, 3],
        [7, 8, 9],
      ],
    });
    expect(inferenceError(() => preprocessInput([1, 2], 'resize', [], 'f')).message).toContain(
      'needs a declared input shape',
    );
    expect(
      inferenceError(() =>
        preprocessInput([1, 2], 'resize', [{ name: 'x', shape: [1, 2, 2, 2] }], 'f'),
      ).message,
    ).toContain('the ranks differ');
  });

  it('none (or absent) passes any value through untouched', () => {
    const value = { amount: 12, country: 'DE' };
    expect(preprocessInput(value, undefined, [], 'f')).toBe(value);
    expect(preprocessInput(value, 'none', [], 'f')).toBe(value);
  });
});

describe('postprocessing', () => {
  it('softmax: probabilities, argmax index, label and score', () => {
    const logits = [1, 2, 0.5];
    const e = logits.map(Math.exp);
    const sum = e[0]! + e[1]! + e[2]!;
    const result = postprocess(
      vector(logits),
      config({ postprocessing: 'softmax', postprocessing_params: { labels: ['a', 'b', 'c'] } }),
    );
    expect(Object.keys(result)).toEqual(['probabilities', 'index', 'label', 'score']);
    const p = result.probabilities as number[];
    e.forEach((x, i) => expect(p[i]).toBeCloseTo(x / sum, 12));
    expect(result).toMatchObject({ index: 1, label: 'b' });
    expect(result.score).toBeCloseTo(e[1]! / sum, 12);
    expect(softmax([1000, 1000])).toEqual([0.5, 0.5]);
  });

  it('argmax: index, label (index without labels), raw score; ties to the lowest index', () => {
    expect(postprocess(vector([0.1, 3, -2]), config({ postprocessing: 'argmax' }))).toEqual({
      index: 1,
      label: 1,
      score: 3,
    });
    expect(postprocess(vector([2, 2]), config({ postprocessing: 'argmax' })).index).toBe(0);
    const squeezed: ModelOutput = {
      kind: 'tensor',
      name: 'y',
      tensor: { data: [0, 5, 1], dims: [1, 3] },
    };
    expect(postprocess(squeezed, config({ postprocessing: 'argmax' })).index).toBe(1);
  });

  it('threshold: score against the threshold (default 0.5), or the two labels', () => {
    expect(postprocess(vector([0.7]), config({ postprocessing: 'threshold' }))).toEqual({
      score: 0.7,
      label: true,
    });
    expect(
      postprocess(vector([0.7]), config({ postprocessing: 'threshold', threshold: 0.8 })),
    ).toEqual({ score: 0.7, label: false });
    expect(
      postprocess(
        vector([0.8]),
        config({
          postprocessing: 'threshold',
          threshold: 0.8,
          postprocessing_params: { labels: ['ok', 'fraud'] },
        }),
      ),
    ).toEqual({ score: 0.8, label: 'fraud' });
    expect(
      postprocess(
        vector([0.9, 0.1]),
        config({ postprocessing: 'threshold', postprocessing_params: { index: 1 } }),
      ),
    ).toEqual({ score: 0.1, label: false });
  });

  it('none: the output as nested arrays, or a custom value as returned', () => {
    const matrix: ModelOutput = {
      kind: 'tensor',
      name: 'y',
      tensor: { data: [1, 2, 3, 4], dims: [2, 2] },
    };
    expect(postprocess(matrix, config())).toEqual({
      output: [
        [1, 2],
        [3, 4],
      ],
    });
    expect(postprocess({ kind: 'value', value: { risk: 'low' } }, config())).toEqual({
      output: { risk: 'low' },
    });
    expect(
      postprocess({ kind: 'value', value: [0.2, 0.8] }, config({ postprocessing: 'argmax' })),
    ).toEqual({ index: 1, label: 1, score: 0.8 });
  });

  it('rejects outputs the postprocessing cannot read', () => {
    const bad = (output: ModelOutput, extra: Partial<AiConfig>) =>
      inferenceError(() => postprocess(output, config(extra)));
    expect(bad(vector([0.1, 0.9]), { postprocessing: 'threshold' }).message).toContain(
      'set postprocessing_params.index',
    );
    expect(
      bad(vector([1, 2]), { postprocessing: 'softmax', postprocessing_params: { labels: ['a'] } })
        .message,
    ).toBe('postprocessing_params.labels names 1 classes but the model output has 2 values');
    const matrix: ModelOutput = {
      kind: 'tensor',
      name: 'y',
      tensor: { data: [1, 2, 3, 4], dims: [2, 2] },
    };
    expect(bad(matrix, { postprocessing: 'argmax' }).message).toContain('needs one vector');
    expect(bad(vector([Number.NEGATIVE_INFINITY]), {}).code).toBe('INFERENCE_OUTPUT_INVALID');
    expect(bad({ kind: 'value', value: 'high' }, { postprocessing: 'softmax' }).code).toBe(
      'INFERENCE_OUTPUT_INVALID',
    );
    expect(bad({ kind: 'value', value: undefined }, {}).message).toContain('returned nothing');
    expect(bad({ kind: 'value', value: { at: new Date(0) } }, {}).message).toContain('not JSON');
  });
});

describe('readInputSource', () => {
  it('reads dotted and indexed state paths, with or without state.', () => {
    const state = { features: [1, 2], tx: { features: [3], images: [[9]] } };
    expect(readInputSource(state, 'features')).toEqual([1, 2]);
    expect(readInputSource(state, 'state.tx.features')).toEqual([3]);
    expect(readInputSource(state, 'tx.images[0]')).toEqual([9]);
    expect(inferenceError(() => readInputSource(state, 'tx.missing')).message).toBe(
      "input_source 'tx.missing' is missing from the workflow state",
    );
    expect(inferenceError(() => readInputSource(state, 'a..b')).code).toBe(
      'INFERENCE_INPUT_INVALID',
    );
  });
});
