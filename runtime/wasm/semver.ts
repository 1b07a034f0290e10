/**
 * Semantic version tags (semver.org 2.0.0) of registered WebAssembly binaries (spec:
 * `version_tag`, "semantic version"): parsing and precedence, for validation and for "the
 * latest version of NAME".
 */

// semver.org's recommended pattern, without the optional leading `v`.
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

interface Parsed {
  core: [number, number, number];
  pre: string[];
}

function parse(tag: string): Parsed | undefined {
  const m = SEMVER.exec(tag);
  if (!m) return undefined;
  return {
    core: [Number(m[1]), Number(m[2]), Number(m[3])],
    pre: m[4] === undefined ? [] : m[4].split('.'),
  };
}

/** Whether `tag` is a semantic version (`1.2.3`, `1.0.0-rc.1`, `2.0.0+build.5`). */
export function isSemver(tag: string): boolean {
  return tag.length <= 50 && SEMVER.test(tag);
}

function compareIdentifiers(a: string, b: string): number {
  const an = /^\d+$/.test(a);
  const bn = /^\d+$/.test(b);
  if (an && bn) return Number(a) - Number(b);
  if (an) return -1;
  if (bn) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Semver precedence of two valid tags: negative, zero or positive (build metadata ignored). */
export function compareSemver(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) throw new TypeError(`not semantic versions: ${a}, ${b}`);
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return x.core[i]! - y.core[i]!;
  if (x.pre.length === 0 || y.pre.length === 0) return y.pre.length - x.pre.length;
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const c = compareIdentifiers(x.pre[i]!, y.pre[i]!);
    if (c !== 0) return c;
  }
  return x.pre.length - y.pre.length;
}
