/**
 * The gateway's record of devices with nothing to resume (gateway/link/quietDevices.ts): an
 * entry is taken once, only as its latest read found it, only if nothing touched the device
 * since that read began, only while the gateway is trusted, and only while young.
 */
import { describe, expect, it } from 'vitest';
import { createQuietDevices } from '../../gateway/link/quietDevices.js';

describe('quiet devices', () => {
  const setUp = (bounds = {}) => {
    const clock = { ms: 0, trusted: true };
    const quiet = createQuietDevices(
      () => clock.trusted,
      () => clock.ms,
      bounds,
    );
    return { clock, quiet };
  };

  it('takes a device its read found quiet, once', () => {
    const { quiet } = setUp();
    const read = quiet.reading(['d1', 'd2']);
    quiet.read('d1', read, true);
    quiet.read('d2', read, false);
    expect(quiet.take('d1')).toBe(true);
    expect(quiet.take('d1')).toBe(false);
    expect(quiet.take('d2')).toBe(false);
    expect(quiet.take('never-read')).toBe(false);
  });

  it('does not take a device touched after its read began, or whose read has not ended', () => {
    const { quiet } = setUp();
    const read = quiet.reading(['d1', 'd2']);
    quiet.touched('d1'); // a command committed while the read ran
    quiet.read('d1', read, true);
    expect(quiet.take('d1')).toBe(false);
    expect(quiet.take('d2')).toBe(false); // still reading
  });

  it('goes by the latest read only', () => {
    const { quiet } = setUp();
    const first = quiet.reading(['d1']);
    quiet.touched('d1');
    const second = quiet.reading(['d1']);
    quiet.read('d1', first, true); // an older snapshot, from before the touch
    expect(quiet.take('d1')).toBe(false);
    const third = quiet.reading(['d1']);
    quiet.read('d1', second, true);
    quiet.read('d1', third, true);
    expect(quiet.take('d1')).toBe(true);
  });

  it('takes nothing after lost notifications, while untrusted, or once old', () => {
    const { clock, quiet } = setUp({ maxAgeMs: 1000 });
    const read = quiet.reading(['d1', 'd2', 'd3']);
    for (const id of ['d1', 'd2', 'd3']) quiet.read(id, read, true);
    quiet.forget();
    expect(quiet.take('d1')).toBe(false);
    const again = quiet.reading(['d2', 'd3']);
    quiet.read('d2', again, true);
    quiet.read('d3', again, true);
    clock.trusted = false;
    expect(quiet.take('d2')).toBe(false);
    clock.trusted = true;
    clock.ms = 1001;
    expect(quiet.take('d3')).toBe(false);
  });

  it('holds at most maxEntries, dropping the oldest', () => {
    const { quiet } = setUp({ maxEntries: 2 });
    const read = quiet.reading(['d1', 'd2', 'd3']);
    for (const id of ['d1', 'd2', 'd3']) quiet.read(id, read, true);
    expect(quiet.take('d1')).toBe(false);
    expect(quiet.take('d2')).toBe(true);
    expect(quiet.take('d3')).toBe(true);
  });
});
