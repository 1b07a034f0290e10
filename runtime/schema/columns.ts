/**
 * Small constructors that keep table definitions readable: `uuid('id', { pk: true })`,
 * `varchar('status', 50, { required: true, check: WORKFLOW_STATUSES })`.
 * A column is nullable unless it is a primary key, `required`, or has a default.
 */
import type {
  ColumnDef,
  ColumnDefault,
  ColumnType,
  ColumnReference,
  IndexDef,
  OnDelete,
} from './model.js';

/** Options shared by every column constructor. */
export interface ColumnOptions {
  pk?: boolean;
  required?: boolean;
  unique?: boolean;
  /** `'now'`, a JSON value for jsonb columns, or a literal. */
  default?: string | number | boolean | Record<string, unknown> | unknown[];
  /** `'table.column'`, cascading on delete unless `onDelete` says otherwise. */
  references?: string;
  onDelete?: OnDelete;
  check?: readonly (string | number)[];
  generated?: string;
}

function toDefault(type: ColumnType, value: ColumnOptions['default']): ColumnDefault | undefined {
  if (value === undefined) return undefined;
  if (value === 'now' && (type === 'timestamptz' || type === 'timestamp')) return { kind: 'now' };
  if (type === 'jsonb') return { kind: 'json', value };
  if (typeof value === 'object') throw new Error(`column default of ${type} must be a literal`);
  return { kind: 'value', value };
}

function toReference(options: ColumnOptions): ColumnReference | undefined {
  if (options.references === undefined) return undefined;
  const [table, column] = options.references.split('.');
  if (!table || !column)
    throw new Error(`references must be 'table.column': ${options.references}`);
  return { table, column, onDelete: options.onDelete ?? 'CASCADE' };
}

function column(
  name: string,
  type: ColumnType,
  options: ColumnOptions = {},
  length?: number,
): ColumnDef {
  const def = toDefault(type, options.default);
  const pk = options.pk ?? false;
  return {
    name,
    type,
    ...(length === undefined ? {} : { length }),
    nullable: !(pk || options.required === true || def !== undefined || type.endsWith('serial')),
    primaryKey: pk,
    unique: options.unique ?? false,
    ...(def === undefined ? {} : { default: def }),
    ...(options.references === undefined ? {} : { references: toReference(options)! }),
    ...(options.check === undefined ? {} : { check: options.check }),
    ...(options.generated === undefined ? {} : { generated: options.generated }),
  };
}

/** UUID column (TEXT on the edge). */
export const uuid = (name: string, o?: ColumnOptions) => column(name, 'uuid', o);
/** VARCHAR(length) column (TEXT on the edge). */
export const varchar = (name: string, length: number, o?: ColumnOptions) =>
  column(name, 'varchar', o, length);
/** Unbounded text column. */
export const text = (name: string, o?: ColumnOptions) => column(name, 'text', o);
/** 32-bit integer column. */
export const integer = (name: string, o?: ColumnOptions) => column(name, 'integer', o);
/** 64-bit integer column. */
export const bigint = (name: string, o?: ColumnOptions) => column(name, 'bigint', o);
/** Auto-increment integer key (SERIAL; INTEGER PRIMARY KEY AUTOINCREMENT on the edge). */
export const serial = (name: string) => column(name, 'serial', { pk: true });
/** Auto-increment 64-bit key. */
export const bigserial = (name: string) => column(name, 'bigserial', { pk: true });
/** Double-precision float column (REAL on the edge). */
export const double = (name: string, o?: ColumnOptions) => column(name, 'double', o);
/** Boolean column (INTEGER 0/1 on the edge). */
export const boolean = (name: string, o?: ColumnOptions) => column(name, 'boolean', o);
/** JSONB column (JSON text on the edge). */
export const jsonb = (name: string, o?: ColumnOptions) => column(name, 'jsonb', o);
/** TIMESTAMPTZ column (ISO 8601 text on the edge). */
export const timestamptz = (name: string, o?: ColumnOptions) => column(name, 'timestamptz', o);
/** TIMESTAMP without time zone (only where the spec names it). */
export const timestamp = (name: string, o?: ColumnOptions) => column(name, 'timestamp', o);
/** Binary column (BLOB on the edge). */
export const bytea = (name: string, o?: ColumnOptions) => column(name, 'bytea', o);
/** Full-text search vector; cloud only, omitted on the edge. */
export const tsvector = (name: string, o?: ColumnOptions) => column(name, 'tsvector', o);

/** `created_at` with the usual `now()` default. */
export const createdAt = () => timestamptz('created_at', { default: 'now' });
/** `updated_at` with the usual `now()` default. */
export const updatedAt = () => timestamptz('updated_at', { default: 'now' });
/** `metadata` JSON object defaulting to `{}`. */
export const metadata = (name = 'metadata') => jsonb(name, { default: {} });

/** An index over columns; a leading `-` on a column name means descending. */
export function index(
  name: string,
  columns: readonly string[],
  options: {
    unique?: boolean;
    using?: 'gin';
    where?: string;
    storage?: Readonly<Record<string, number>>;
  } = {},
): IndexDef {
  return {
    name,
    columns: columns.map((c) =>
      c.startsWith('-') ? { name: c.slice(1), desc: true } : { name: c },
    ),
    ...(options.unique ? { unique: true } : {}),
    ...(options.using ? { using: options.using } : {}),
    ...(options.where !== undefined ? { where: options.where } : {}),
    ...(options.storage ? { storage: options.storage } : {}),
  };
}
