/**
 * The workflow types a runtime can start: the latest definition per `workflow_type`.
 * Running workflows never consult it — they run on their own definition snapshot — so
 * registering a new version changes only workflows started afterwards.
 */
import { readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import {
  loadDefinitionFile,
  type AiRuntime,
  type WorkflowDefinition,
} from '../../runtime/index.js';

/** Definitions by workflow type. */
export interface WorkflowRegistry {
  register(definition: WorkflowDefinition): void;
  get(workflowType: string): WorkflowDefinition | undefined;
  types(): string[];
  /** Load and register one YAML file; step functions are resolved under `stepsRoot`. */
  registerFile(file: string, stepsRoot?: string): Promise<WorkflowDefinition>;
  /** Load and register every `.yaml`/`.yml` file of a folder (not recursive). */
  registerDirectory(dir: string, stepsRoot?: string): Promise<WorkflowDefinition[]>;
}

/** Options of {@link createWorkflowRegistry}. */
export interface WorkflowRegistryOptions {
  /**
   * AI_INFERENCE runtimes files may use (default onnx and custom): `createRuntime` passes the
   * kinds it has providers for, so `runtime: tflite` loads only where it can run.
   */
  aiRuntimes?: readonly AiRuntime[];
}

/** A new, empty registry. */
export function createWorkflowRegistry(
  initial: readonly WorkflowDefinition[] = [],
  options: WorkflowRegistryOptions = {},
): WorkflowRegistry {
  const loadOptions = options.aiRuntimes === undefined ? {} : { aiRuntimes: options.aiRuntimes };
  const byType = new Map<string, WorkflowDefinition>();
  const registry: WorkflowRegistry = {
    register: (definition) => void byType.set(definition.workflow_type, definition),
    get: (type) => byType.get(type),
    types: () => [...byType.keys()].sort(),
    async registerFile(file, stepsRoot) {
      const { definition } = await loadDefinitionFile(file, {
        ...loadOptions,
        ...(stepsRoot === undefined ? {} : { stepsRoot }),
      });
      registry.register(definition);
      return definition;
    },
    async registerDirectory(dir, stepsRoot) {
      const files = readdirSync(dir)
        .filter((f) => ['.yaml', '.yml'].includes(extname(f)))
        .sort();
      const loaded: WorkflowDefinition[] = [];
      for (const f of files) loaded.push(await registry.registerFile(join(dir, f), stepsRoot));
      return loaded;
    },
  };
  for (const d of initial) registry.register(d);
  return registry;
}
