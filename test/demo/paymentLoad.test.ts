/**
 * The demo's customers pay with data a terminal accepts: no drawn payment looks like it
 * carries a card number in clear (the agent would refuse it, and the demo would report
 * failed payments that no real POS would cause).
 */
import { describe, expect, it } from 'vitest';
import { drawPayment } from '../../bin/demo/paymentLoad.js';
import { findClearPan } from '../../runtime/index.js';

describe('demo payments', () => {
  it('never draw data that looks like a card number in clear', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const flagged = Array.from({ length: 20_000 }, () =>
      drawPayment(random, 'http://127.0.0.1:40000'),
    ).filter((payment) => findClearPan(payment) !== undefined);
    expect(flagged).toEqual([]);
  });
});
