/**
 * The workflow types this device can start: the YAML files it was installed with (`--workflows
 * DIR`), overlaid by the definitions hot-deployed to it since (`edge_workflow_cache`, filled
 * by `update_workflow` commands and by the signed configuration).
 *
 * A hot-deployed definition wins over the installed file of the same type: it is the newer
 * decision of the fleet's operator, and a terminal that reboots must not silently fall back to
 * the version it was imaged with. (To return to the installed version, deploy it again.)
 *
 * A deployment is checked completely before anything is stored — YAML, schema, cross-checks
 * and that every step function loads from the steps root — and, when the sender says what it
 * is deploying, that the type and the definition hash match. Only then is it stored and
 * registered, so the next workflow of that type starts on it; workflows already running keep
 * the definition snapshot they started with (docs/architecture.md#durability).
 */
import { readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { WorkflowRegistry } from '../../actors/index.js';
import {
  DefinitionError,
  definitionHash,
  loadDefinition,
  loadDefinitionFile,
  type DefinitionIssue,
  type EdgeStore,
  type WorkflowDefinition,
} from '../../runtime/index.js';
import { AgentError } from './errors.js';
import { listCachedWorkflows, saveCachedWorkflow } from './workflowCache.js';

/** Where a definition in the catalog came from. */
export type DefinitionSource =
  { kind: 'file'; file: string } | { kind: 'command'; commandId: string } | { kind: 'config' };

/** One loaded workflow type. */
export interface CatalogEntry {
  definition: WorkflowDefinition;
  hash: string;
  source: DefinitionSource;
}

/** A definition to hot-deploy. */
export interface DeployRequest {
  yaml: string;
  /** The type the sender means to deploy; the YAML must declare it. */
  workflowType?: string;
  /** The sender's `definitionHash`; the loaded definition must hash to it. */
  definitionHash?: string;
  source: Exclude<DefinitionSource, { kind: 'file' }>;
}

/** What a deployment did. */
export interface DeployResult {
  workflowType: string;
  workflowVersion: string | null;
  definitionHash: string;
  /** The version new workflows started on before (null when the type is new). */
  previousHash: string | null;
  /** False when this exact definition was already in force (nothing changed). */
  changed: boolean;
}

/** A hot-deployed definition that no longer loads, skipped at start. */
export interface CatalogSkip {
  workflowType: string;
  message: string;
}

/** The device's workflow types. */
export interface WorkflowCatalog {
  /** The registry the runtime starts workflows from. */
  readonly registry: WorkflowRegistry;
  /** Load the installed files, then the hot-deployed definitions over them. */
  load(): Promise<{ files: number; cached: number; skipped: CatalogSkip[] }>;
  /** Check a definition without storing it; throws {@link AgentError}. */
  check(request: Omit<DeployRequest, 'source'>): Promise<Omit<CatalogEntry, 'source'>>;
  /** Check, store and register a definition (see the module comment). */
  deploy(request: DeployRequest): Promise<DeployResult>;
  /** The entry of `workflowType`, if loaded. */
  get(workflowType: string): CatalogEntry | undefined;
  /** Every loaded entry, by type. */
  entries(): CatalogEntry[];
}

/** What the catalog needs. */
export interface WorkflowCatalogDeps {
  store: EdgeStore;
  registry: WorkflowRegistry;
  /** Root of step modules (function paths of every definition resolve under it). */
  stepsRoot: string;
  /** Folders of installed YAML files (not recursive). */
  workflowDirs?: readonly string[];
  now?: () => Date;
}

const issuesOf = (error: DefinitionError) =>
  error.issues
    .filter((issue: DefinitionIssue) => issue.severity === 'error')
    .slice(0, 20)
    .map((issue) => ({
      path: issue.path,
      message: issue.message,
      code: issue.code,
      ...(issue.line !== undefined ? { line: issue.line, column: issue.column } : {}),
    }));

/** Create the catalog over `deps.registry` (loaded by `load()`). */
export function createWorkflowCatalog(deps: WorkflowCatalogDeps): WorkflowCatalog {
  const now = deps.now ?? (() => new Date());
  const entries = new Map<string, CatalogEntry>();
  let deploying: Promise<unknown> = Promise.resolve();

  const put = (entry: CatalogEntry) => {
    entries.set(entry.definition.workflow_type, entry);
    deps.registry.register(entry.definition);
  };

  const check: WorkflowCatalog['check'] = async ({ yaml, workflowType, definitionHash: hash }) => {
    let definition: WorkflowDefinition;
    try {
      definition = (await loadDefinition(yaml, { stepsRoot: deps.stepsRoot })).definition;
    } catch (error) {
      if (!(error instanceof DefinitionError)) throw error;
      const issues = issuesOf(error);
      throw new AgentError(
        'WORKFLOW_DEFINITION_INVALID',
        `the workflow definition is invalid: ${issues
          .slice(0, 3)
          .map(
            (i) =>
              `${i.path || '$'}${i.line !== undefined ? ` (line ${i.line})` : ''}: ${i.message}`,
          )
          .join('; ')}`,
        { cause: error, details: { issues } },
      );
    }
    if (workflowType !== undefined && definition.workflow_type !== workflowType)
      throw new AgentError(
        'WORKFLOW_TYPE_MISMATCH',
        `the YAML declares workflow_type ${JSON.stringify(definition.workflow_type)}, not ${JSON.stringify(workflowType)}`,
      );
    const actual = definitionHash(definition);
    if (hash !== undefined && hash !== actual)
      throw new AgentError(
        'WORKFLOW_HASH_MISMATCH',
        `the definition hashes to ${actual}, not to the definition_hash sent (${hash})`,
      );
    return { definition, hash: actual };
  };

  const deployNow = async (request: DeployRequest): Promise<DeployResult> => {
    const checked = await check(request);
    const type = checked.definition.workflow_type;
    const previous = entries.get(type);
    const result: DeployResult = {
      workflowType: type,
      workflowVersion: checked.definition.workflow_version ?? null,
      definitionHash: checked.hash,
      previousHash: previous?.hash ?? null,
      changed: previous?.hash !== checked.hash,
    };
    await saveCachedWorkflow(
      deps.store,
      {
        workflowType: type,
        workflowVersion: result.workflowVersion,
        yaml: request.yaml,
        definitionHash: checked.hash,
        sourceCommandId: request.source.kind === 'command' ? request.source.commandId : null,
      },
      now(),
    );
    put({ definition: checked.definition, hash: checked.hash, source: request.source });
    return result;
  };

  return {
    registry: deps.registry,
    async load() {
      let files = 0;
      for (const dir of deps.workflowDirs ?? []) {
        const names = readdirSync(dir)
          .filter((f) => ['.yaml', '.yml'].includes(extname(f)))
          .sort();
        for (const name of names) {
          const file = join(dir, name);
          const { definition } = await loadDefinitionFile(file, { stepsRoot: deps.stepsRoot });
          put({ definition, hash: definitionHash(definition), source: { kind: 'file', file } });
          files += 1;
        }
      }
      let cached = 0;
      const skipped: CatalogSkip[] = [];
      for (const row of await listCachedWorkflows(deps.store)) {
        try {
          const { definition, hash } = await check({ yaml: row.yaml });
          put({
            definition,
            hash,
            source:
              row.sourceCommandId === null
                ? { kind: 'config' }
                : { kind: 'command', commandId: row.sourceCommandId },
          });
          cached += 1;
        } catch (error) {
          if (!(error instanceof AgentError)) throw error;
          skipped.push({ workflowType: row.workflowType, message: error.message });
        }
      }
      return { files, cached, skipped };
    },
    check,
    deploy(request) {
      // one deployment at a time: two for the same type must not interleave store and register
      const next = deploying.then(() => deployNow(request));
      deploying = next.catch(() => undefined);
      return next;
    },
    get: (type) => entries.get(type),
    entries: () =>
      [...entries.values()].sort((a, b) =>
        a.definition.workflow_type.localeCompare(b.definition.workflow_type),
      ),
  };
}
