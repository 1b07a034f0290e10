/**
 * A compiled workflow machine's configuration as the inspector draws it: the XState config
 * JSON-stringified, functions (guards, `assign` actions) replaced by `{ type }` objects since
 * their code cannot travel. Nothing of a workflow's data is in it: the config holds step
 * names, transitions and the initial bookkeeping context only.
 */
import type { CompiledWorkflow } from '../workflow/compileMachine.js';

/** The JSON-stringified machine configuration of `compiled`. */
export function machineDefinition(compiled: CompiledWorkflow): string {
  return JSON.stringify(compiled.machine.config, (_key, value: unknown) => {
    if (typeof value === 'function') {
      const named = value as { type?: unknown; name?: unknown };
      const type =
        typeof named.type === 'string'
          ? named.type
          : typeof named.name === 'string' && named.name !== ''
            ? named.name
            : 'inline';
      return { type };
    }
    return value;
  });
}
