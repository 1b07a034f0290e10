/** Per-device gauges keep at most `maxDevices` devices' series, dropping the stalest first. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createDeviceGauges } from '../../gateway/deviceGauges.js';

const report = (pending: number) => ({
  disk_usage_percent: 10,
  memory_usage_mb: 64,
  pending_transactions: pending,
  network_available: true,
});

describe('device gauges', () => {
  it('bound their cardinality, evicting the device that reported least recently', async () => {
    const registry = new Registry();
    const gauges = createDeviceGauges(registry, 2);
    gauges.report('a', report(1));
    gauges.report('b', report(2));
    gauges.report('a', report(3)); // a is now the most recent
    gauges.report('c', report(4)); // evicts b
    const text = await registry.metrics();
    expect(text).toContain('saffron_device_pending_transactions{device_id="a"} 3');
    expect(text).toContain('saffron_device_pending_transactions{device_id="c"} 4');
    expect(text).not.toContain('device_id="b"');
    gauges.forget('a');
    const after = await registry.metrics();
    expect(after).not.toContain('device_id="a"');
    expect(after).toContain('saffron_device_memory_usage_mb{device_id="c"} 64');
  });
});
