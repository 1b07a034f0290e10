/**
 * Prometheus gauges of what devices report (`POST /api/v1/devices/{id}/metrics`): SAF
 * backlog, disk, memory and network per device, labelled by `device_id`.
 *
 * Cardinality is bounded: a process keeps series for at most `maxDevices` devices (default
 * 10,000); past that, the device that reported least recently loses its series. A deleted
 * device's series are removed at once. Each gateway process exports the devices that
 * reported to it; the same values are stored in `edge_devices.metadata.metrics`, which is
 * where a fleet-wide view should read them.
 */
import { Gauge, type Registry } from 'prom-client';

/** What a device reports. */
export interface ReportedMetrics {
  disk_usage_percent: number;
  memory_usage_mb: number;
  pending_transactions: number;
  network_available: boolean;
}

/** The per-device gauges of one gateway. */
export interface DeviceGauges {
  report(deviceId: string, metrics: ReportedMetrics): void;
  forget(deviceId: string): void;
}

/** Register the device gauges on `registry`. */
export function createDeviceGauges(registry: Registry, maxDevices = 10_000): DeviceGauges {
  const gauge = (name: string, help: string) =>
    new Gauge({ name, help, labelNames: ['device_id'] as const, registers: [registry] });
  const pending = gauge(
    'saffron_device_pending_transactions',
    'store-and-forward records the device last reported as not yet synced',
  );
  const disk = gauge('saffron_device_disk_usage_percent', 'disk usage the device last reported');
  const memory = gauge('saffron_device_memory_usage_mb', 'memory use the device last reported');
  const network = gauge(
    'saffron_device_network_available',
    '1 when the device last reported network connectivity',
  );
  const all = [pending, disk, memory, network];
  const tracked = new Set<string>(); // insertion order = least recently reported first
  const forget = (deviceId: string) => {
    if (!tracked.delete(deviceId)) return;
    for (const g of all) g.remove({ device_id: deviceId });
  };
  return {
    report(deviceId, metrics) {
      tracked.delete(deviceId);
      tracked.add(deviceId);
      for (const oldest of tracked) {
        if (tracked.size <= maxDevices) break;
        forget(oldest);
      }
      const labels = { device_id: deviceId };
      pending.set(labels, metrics.pending_transactions);
      disk.set(labels, metrics.disk_usage_percent);
      memory.set(labels, metrics.memory_usage_mb);
      network.set(labels, metrics.network_available ? 1 : 0);
    },
    forget,
  };
}
