/**
 * Command versions are semantic versions without pre-release or build parts
 * (`MAJOR.MINOR.PATCH`): enough to order a command type's history, and nothing whose
 * ordering rules surprise anyone.
 */
import { z } from 'zod';

const SEMVER = /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/;

/** A version field: `1.4.2`. */
export const versionField = z.string().regex(SEMVER, 'versions are MAJOR.MINOR.PATCH (e.g. 1.4.2)');

const parts = (version: string): [number, number, number] => {
  const m = SEMVER.exec(version);
  if (!m) throw new TypeError(`not a version: ${version}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
};

/** Negative, zero or positive as `a` is older than, the same as or newer than `b`. */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}
