/**
 * Handlers of the commands the edge components can carry out themselves: UPDATE_CONFIG
 * (poll the configuration now), DIAGNOSTIC (collect and report metrics) and SYNC_WASM /
 * sync_wasm (bring a binary into the cache). The agent adds SYNC_TRANSACTIONS,
 * UPDATE_WORKFLOW / update_workflow and REBOOT, which need the rest of the agent.
 *
 * Payloads are checked here too, loosely: the cloud already validated them strictly, and a
 * device that refused a field added by a newer cloud would fail commands it could run.
 */
import { z } from 'zod';
import type { ConfigSync } from '../config/configSync.js';
import type { MetricsReporter } from '../metrics/metricsReporter.js';
import type { WasmCache } from '../wasm/wasmCache.js';
import type { CommandHandler } from './command.js';
import { CommandError } from './errors.js';
import { payloadOf } from './payloadOf.js';

/** The components the default handlers use; a handler is left out when its component is. */
export interface DefaultHandlerDeps {
  config?: Pick<ConfigSync, 'pollNow' | 'status'>;
  wasm?: Pick<WasmCache, 'ensure'>;
  metrics?: Pick<MetricsReporter, 'reportNow'>;
}

const updateConfig = z.looseObject({ force: z.boolean().optional() });
const diagnostic = z.looseObject({
  checks: z.array(z.string()).optional(),
  upload_logs: z.boolean().optional(),
});
const syncWasm = z.looseObject({ binary_hash: z.string() });

/** Handlers for the commands the given components can carry out. */
export function defaultCommandHandlers(deps: DefaultHandlerDeps): Record<string, CommandHandler> {
  const handlers: Record<string, CommandHandler> = {};
  const { config, wasm, metrics } = deps;

  if (config)
    handlers.UPDATE_CONFIG = async (payload) => {
      const { force } = payloadOf(updateConfig, payload);
      const results = await config.pollNow({ force: force === true });
      const bad = results.filter((r) => r.outcome === 'rejected' || r.outcome === 'failed');
      if (bad.length > 0)
        throw new CommandError(
          'COMMAND_FAILED',
          bad
            .map(
              (r) => `${r.name} ${r.outcome} (${r.error?.code ?? '?'}): ${r.error?.message ?? ''}`,
            )
            .join('; '),
          { details: { documents: results } },
        );
      return {
        documents: results.map((r) => ({ name: r.name, outcome: r.outcome, etag: r.etag })),
      };
    };

  if (metrics)
    handlers.DIAGNOSTIC = async (payload) => {
      const { checks = [], upload_logs } = payloadOf(diagnostic, payload);
      const outcome = await metrics.reportNow();
      if (!outcome.report)
        throw new CommandError(
          'COMMAND_FAILED',
          `could not collect metrics: ${outcome.sent ? '' : outcome.error.message}`,
        );
      const results: Record<string, unknown> = {};
      for (const check of checks) {
        if (check === 'metrics') results[check] = 'ok';
        else if (check === 'config' && config) {
          const status = config.status();
          results[check] = {
            documents: Object.fromEntries(
              Object.entries(status.documents).map(([name, d]) => [
                name,
                { etag: d.etag, revision: d.revision, last_outcome: d.lastOutcome },
              ]),
            ),
            last_rejection: status.lastRejection,
          };
        } else results[check] = 'unsupported';
      }
      return {
        metrics: outcome.report,
        reported: outcome.sent,
        ...(checks.length > 0 ? { checks: results } : {}),
        ...(upload_logs ? { upload_logs: 'unsupported' } : {}),
      };
    };

  if (wasm) {
    const ensure: CommandHandler = async (payload, _command, context) => {
      const { binary_hash } = payloadOf(syncWasm, payload);
      const result = await wasm.ensure(binary_hash, { signal: context.signal });
      return { binary_hash, outcome: result.outcome, size_bytes: result.sizeBytes };
    };
    handlers.SYNC_WASM = ensure;
    handlers.sync_wasm = ensure;
  }
  return handlers;
}
