/**
 * Translation of zod issues into definition issues.
 *
 * zod's own messages ("Invalid input: expected string, received undefined") speak about the
 * validator; a definition author needs "missing required field 'function'" and, for typos, the
 * key or kind that was meant. This file is the one place where that wording lives.
 */
import type { z } from 'zod';
import { STEP_KINDS } from './kinds.js';
import type { PathSegment } from './path.js';
import { errorIssue, type RawIssue } from './rawIssue.js';
import { CUSTOM_ISSUE_PARAM, stepSchema, workflowDefinitionSchema } from './schema.js';
import { keysAt, keysByOption } from './schemaKeys.js';
import { didYouMean } from './suggest.js';
import { DEFINITION_ISSUE_CODES, type DefinitionIssueCode } from './errors.js';
import { describeType, isRecord, valueAt } from './values.js';

const fieldsByKind = keysByOption(stepSchema);

function quoteList(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
}

function isIssueCode(value: unknown): value is DefinitionIssueCode {
  return (DEFINITION_ISSUE_CODES as readonly unknown[]).includes(value);
}

/** Is `path` the path of a step (`steps[i]` or `...loop_body[i]`)? */
function isStepPath(path: readonly PathSegment[]): boolean {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  return typeof last === 'number' && (parent === 'steps' || parent === 'loop_body');
}

function unknownKeyMessage(key: string, owner: unknown, path: PathSegment[], known: string[]) {
  const base = `unknown key '${key}'`;
  const hint = didYouMean(key, known);
  if (hint !== '' || !isStepPath(path) || !isRecord(owner) || typeof owner.type !== 'string') {
    return base + hint;
  }
  const kind = owner.type;
  const kindsWithKey = [...fieldsByKind].filter(([, keys]) => keys.includes(key)).map(([k]) => k);
  if (kindsWithKey.length === 0) return base;
  return `${base}: ${kind} steps have no '${key}' (it belongs to ${kindsWithKey.join(', ')} steps)`;
}

function sizeMessage(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): RawIssue {
  const path = issue.path as PathSegment[];
  const small = issue.code === 'too_small';
  const bound = small ? issue.minimum : issue.maximum;
  if (issue.origin === 'number' || issue.origin === 'int' || issue.origin === 'bigint') {
    return errorIssue(
      'OUT_OF_RANGE',
      path,
      `must be ${small ? 'at least' : 'at most'} ${String(bound)}`,
    );
  }
  const unit = issue.origin === 'array' ? 'item' : 'character';
  if (small && Number(bound) === 1) {
    return errorIssue('INVALID_LENGTH', path, `must not be empty`);
  }
  return errorIssue(
    'INVALID_LENGTH',
    path,
    `must have ${small ? 'at least' : 'at most'} ${String(bound)} ${unit}${Number(bound) === 1 ? '' : 's'}`,
  );
}

/** Map one zod issue (from parsing `input`) into one or more raw definition issues. */
export function fromZodIssue(issue: z.core.$ZodIssue, input: unknown): RawIssue[] {
  const path = issue.path.filter(
    (s): s is PathSegment => typeof s === 'string' || typeof s === 'number',
  );
  const value = valueAt(input, path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = keysAt(workflowDefinitionSchema, input, path);
      return issue.keys.map((key) =>
        errorIssue(
          'UNKNOWN_KEY',
          [...path, key],
          unknownKeyMessage(key, value, path, known),
          'key',
        ),
      );
    }
    case 'invalid_union': {
      if (issue.discriminator === 'type' && path[path.length - 1] === 'type') {
        if (value === undefined) {
          return [
            errorIssue(
              'MISSING_FIELD',
              path,
              `missing required field 'type' (one of ${STEP_KINDS.join(', ')})`,
            ),
          ];
        }
        if (typeof value !== 'string') {
          return [
            errorIssue('INVALID_TYPE', path, `expected a step type, got ${describeType(value)}`),
          ];
        }
        return [
          errorIssue(
            'UNKNOWN_STEP_TYPE',
            path,
            `unknown step type '${value}'${didYouMean(value, STEP_KINDS)}`,
          ),
        ];
      }
      return [errorIssue('INVALID_VALUE', path, issue.message)];
    }
    case 'invalid_type': {
      if (path.length === 0) {
        return [errorIssue('ROOT_NOT_MAPPING', path, 'a workflow definition must be a mapping')];
      }
      const parent = valueAt(input, path.slice(0, -1));
      const key = path[path.length - 1];
      if (value === undefined && isRecord(parent) && typeof key === 'string') {
        return [errorIssue('MISSING_FIELD', path, `missing required field '${key}'`)];
      }
      const expected =
        issue.expected === 'object' || issue.expected === 'record'
          ? 'mapping'
          : issue.expected === 'array'
            ? 'list'
            : issue.expected;
      return [errorIssue('INVALID_TYPE', path, `expected ${expected}, got ${describeType(value)}`)];
    }
    case 'invalid_value': {
      const shown = typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
      const hint =
        typeof value === 'string'
          ? didYouMean(
              value,
              issue.values.filter((v): v is string => typeof v === 'string'),
            )
          : '';
      return [
        errorIssue(
          'INVALID_VALUE',
          path,
          `invalid value ${shown}; expected one of ${quoteList(issue.values)}${hint}`,
        ),
      ];
    }
    case 'too_small':
    case 'too_big':
      return [sizeMessage(issue)];
    case 'invalid_format':
      return [errorIssue('INVALID_FORMAT', path, issue.message)];
    case 'custom': {
      const code: unknown = issue.params?.[CUSTOM_ISSUE_PARAM];
      return [errorIssue(isIssueCode(code) ? code : 'INVALID_VALUE', path, issue.message)];
    }
    case 'not_multiple_of':
    case 'invalid_key':
    case 'invalid_element':
      return [errorIssue('INVALID_VALUE', path, issue.message)];
    default: {
      const unreachable: never = issue;
      return [
        errorIssue('INVALID_VALUE', path, String((unreachable as { message: string }).message)),
      ];
    }
  }
}
