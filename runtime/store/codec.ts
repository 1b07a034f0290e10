/**
 * Value encoding at the store boundary, per dialect (spec: type mapping). PostgreSQL returns
 * JSONB parsed and TIMESTAMPTZ as Date; SQLite returns both as text. Writes always send JSON
 * and timestamps as text, which both dialects accept, so only decoding differs.
 */

/** Dialect-specific encoders and decoders for the mapped types. */
export interface Codec {
  /** Encode a JSON value for a JSONB (cloud) or TEXT (edge) column. */
  json(value: unknown): string;
  /** Decode a JSONB / JSON-text column. */
  parseJson(raw: unknown): unknown;
  /** Encode a timestamp as ISO 8601 text. */
  time(value: Date): string;
  /** Decode a timestamp column. */
  parseTime(raw: unknown): Date;
  /** Encode a boolean (true/false in PostgreSQL, 1/0 in SQLite). */
  bool(value: boolean): boolean | number;
  /** Decode a boolean column. */
  parseBool(raw: unknown): boolean;
  /** Decode an INTEGER/BIGINT column that may arrive as string or bigint. */
  parseInt(raw: unknown): number;
}

const shared = {
  json: (value: unknown) => JSON.stringify(value),
  time: (value: Date) => value.toISOString(),
  parseTime: (raw: unknown) => (raw instanceof Date ? raw : new Date(String(raw))),
  parseInt: (raw: unknown) => (typeof raw === 'number' ? raw : Number(raw)),
};

/** Codec of PostgreSQL and PGlite. */
export const postgresCodec: Codec = {
  ...shared,
  parseJson: (raw) => raw,
  bool: (value) => value,
  parseBool: (raw) => raw === true,
};

/** Codec of SQLite. */
export const sqliteCodec: Codec = {
  ...shared,
  parseJson: (raw): unknown => (typeof raw === 'string' ? (JSON.parse(raw) as unknown) : raw),
  bool: (value) => (value ? 1 : 0),
  parseBool: (raw) => raw === 1 || raw === true,
};
