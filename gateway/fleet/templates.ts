/**
 * Command templates: named command sets whose payloads hold `{{ variable }}` references,
 * and the typed variables they take. Rendering reuses the engine's templates
 * (runtime/template) with the variables as the only scope: a string that is exactly one
 * reference is replaced by the variable's value with its JSON type (`"{{ delay }}"` → `30`),
 * inside longer text the value is stringified (`"v{{ version }}"` → `"v2"`). Secrets and
 * workflow context are not reachable — a template is written by operators and its output
 * goes to devices.
 *
 * Checked twice: when a template is saved (references name declared variables, defaults
 * have their declared type, command types exist) and when it is applied (unknown, missing
 * and mistyped variables; then every rendered command against its command type's payload
 * schema). Every problem is reported with its path, never a bare message.
 */
import {
  listTemplateReferences,
  parsePath,
  renderTemplate,
  TemplateError,
} from '../../runtime/index.js';
import { COMMAND_PAYLOADS, createCommandBody, type CreateCommand } from '../link/commandTypes.js';
import type { ValidationIssue } from '../validate.js';
import type { CreateTemplateBody } from './schemas.js';
import type { VARIABLE_TYPES } from './schemas.js';

/** A variable's declared type. */
export type VariableType = (typeof VARIABLE_TYPES)[number];

/** A declared variable. */
export interface VariableSpec {
  type: VariableType;
  required: boolean;
  default?: unknown;
  description?: string;
}

/** A template's command, before rendering. */
export interface TemplateCommand {
  command_type: string;
  payload: Record<string, unknown>;
  max_retries: number;
  expires_in_seconds?: number;
}

/** What a template is made of. */
export interface TemplateDefinition {
  variables: Record<string, VariableSpec>;
  commands: TemplateCommand[];
}

const typeOf = (value: unknown): VariableType | 'null' | 'other' => {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return Number.isFinite(value) ? 'number' : 'other';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    default:
      return 'other';
  }
};

const joinPath = (base: string, keyPath: string) =>
  keyPath === '' ? base : keyPath.startsWith('[') ? `${base}${keyPath}` : `${base}.${keyPath}`;

/** Problems of a template to save (empty when it is sound). */
export function checkTemplate(body: CreateTemplateBody): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const [name, spec] of Object.entries(body.variables)) {
    if (spec.default !== undefined && typeOf(spec.default) !== spec.type)
      issues.push({
        path: `$.variables.${name}.default`,
        message: `the default is ${typeOf(spec.default)}, not ${spec.type}`,
      });
  }
  body.commands.forEach((command, i) => {
    if (!(command.command_type in COMMAND_PAYLOADS))
      issues.push({
        path: `$.commands[${i}].command_type`,
        message: `unknown command type (one of ${Object.keys(COMMAND_PAYLOADS).join(', ')})`,
      });
    let references;
    try {
      references = listTemplateReferences(command.payload);
    } catch (error) {
      issues.push({
        path: `$.commands[${i}].payload`,
        message: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    for (const ref of references) {
      const path = joinPath(`$.commands[${i}].payload`, ref.path);
      let head: string;
      try {
        head = parsePath(ref.reference).head;
      } catch {
        issues.push({ path, message: `'{{ ${ref.reference} }}' is not a variable reference` });
        continue;
      }
      if (!(head in body.variables))
        issues.push({
          path,
          message: `'{{ ${ref.reference} }}' names no declared variable (declare '${head}' under variables)`,
        });
    }
  });
  return issues;
}

/** The outcome of applying a template's variables. */
export type TemplateRendering =
  | { ok: true; commands: CreateCommand[] }
  | {
      ok: false;
      code: 'TEMPLATE_VARIABLES_INVALID' | 'TEMPLATE_RENDER_INVALID';
      issues: ValidationIssue[];
    };

/**
 * Check `values` against the template's variables (unknown, missing, mistyped — paths
 * `$.variables.<name>`), fill defaults, render every command and validate it as a command of
 * its type (paths `$.commands[i].payload…`, in the template).
 */
export function renderTemplateCommands(
  template: TemplateDefinition,
  values: Record<string, unknown>,
): TemplateRendering {
  const issues: ValidationIssue[] = [];
  const scope: Record<string, unknown> = {};
  for (const name of Object.keys(values))
    if (!(name in template.variables))
      issues.push({
        path: `$.variables.${name}`,
        message: 'the template declares no such variable',
      });
  // by name: stored JSONB does not keep declaration order, and messages should not move
  const declared = Object.entries(template.variables).sort(([a], [b]) => a.localeCompare(b));
  for (const [name, spec] of declared) {
    const value = name in values ? values[name] : spec.default;
    if (value === undefined) {
      if (spec.required)
        issues.push({ path: `$.variables.${name}`, message: `required (${spec.type})` });
      continue;
    }
    if (typeOf(value) !== spec.type) {
      issues.push({
        path: `$.variables.${name}`,
        message: `expected ${spec.type}, got ${typeOf(value)}`,
      });
      continue;
    }
    scope[name] = value;
  }
  if (issues.length > 0) return { ok: false, code: 'TEMPLATE_VARIABLES_INVALID', issues };

  const commands: CreateCommand[] = [];
  template.commands.forEach((command, i) => {
    const base = `$.commands[${i}]`;
    let payload: unknown;
    try {
      payload = renderTemplate(command.payload, { state: scope });
    } catch (error) {
      const path =
        error instanceof TemplateError && typeof error.details.path === 'string'
          ? joinPath(`${base}.payload`, error.details.path)
          : `${base}.payload`;
      issues.push({
        path,
        message:
          error instanceof TemplateError && error.code === 'TEMPLATE_UNRESOLVED'
            ? `'{{ ${String(error.details.reference)} }}' has no value (an optional variable without default was not given)`
            : error instanceof Error
              ? error.message
              : String(error),
      });
      return;
    }
    const parsed = createCommandBody.safeParse({ ...command, payload });
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        issues.push({
          path: issue.path.reduce<string>(
            (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
            base,
          ),
          message: issue.message,
        });
      return;
    }
    commands.push(parsed.data);
  });
  if (issues.length > 0) return { ok: false, code: 'TEMPLATE_RENDER_INVALID', issues };
  return { ok: true, commands };
}

/** A stored template's definition (its JSON columns), trusting what was validated on save. */
export function templateDefinition(commands: unknown, variables: unknown): TemplateDefinition {
  return {
    commands: (Array.isArray(commands) ? commands : []) as TemplateCommand[],
    variables: (typeof variables === 'object' && variables !== null ? variables : {}) as Record<
      string,
      VariableSpec
    >,
  };
}
