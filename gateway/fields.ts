/**
 * zod fields that several route modules share, so the same identifier is validated the same
 * way everywhere it appears (path, query or body).
 */
import { z } from 'zod';
import { DEVICE_ID_PATTERN } from './auth/authenticate.js';

/** A device id: what `Authorization: Device <device_id>:…` accepts. */
export const deviceIdField = z
  .string()
  .regex(DEVICE_ID_PATTERN, 'device ids are 1–100 of A–Z a–z 0–9 . _ : -');

/** A device type (also a configuration scope key, so URL-safe). */
export const deviceTypeField = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,50}$/, 'device types are 1–50 of A–Z a–z 0–9 . _ -');

/** A policy name (assignments refer to policies by name). */
export const policyNameField = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'policy names are 1–200 of A–Z a–z 0–9 . _ -');

/** A JSON object. */
export const jsonObjectField = z.record(z.string(), z.unknown());

/**
 * A `?version=n` of a versioned resource. Versions are PostgreSQL `integer`s: a larger number
 * names no version (a 400 here), where the database would refuse the comparison (a 500).
 */
export const versionQueryField = z.coerce.number().int().min(1).max(2_147_483_647);

/** `{device_id}` path parameters. */
export const deviceParams = z.strictObject({ device_id: deviceIdField });

/** ISO 8601 text of a time, or null. */
export const isoOrNull = (value: Date | null): string | null =>
  value === null ? null : value.toISOString();
