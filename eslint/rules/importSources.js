/**
 * What the import rules share: the module-level imports of the file being linted, each
 * with the file it resolves to and the top-level folder that file is in.
 */
import { relative, sep } from 'node:path';
import { resolveSpecifier } from '../moduleGraph.js';

/**
 * @typedef {object} LintedImport
 * @property {import('estree').Node} node the node to report at (the specifier string)
 * @property {string} specifier
 * @property {string} target absolute path of the resolved file
 * @property {string} targetPath the target relative to the root, with `/` separators
 * @property {string} targetFolder first segment of targetPath, `.` for a file at the root
 * @property {boolean} typeOnly
 * @property {boolean} dynamic
 */

/**
 * A path relative to `root` with `/` separators, or undefined when it is outside `root`.
 * @param {string} root
 * @param {string} file
 * @returns {string | undefined}
 */
export function projectPath(root, file) {
  const rel = relative(root, file);
  if (rel === '' || rel.startsWith('..') || rel.includes(':')) return undefined;
  return rel.split(sep).join('/');
}

/**
 * The top-level folder of a project path: `gateway` for `gateway/fleet/driver.ts`, `.` for
 * a file at the root.
 * @param {string} path
 * @returns {string}
 */
export function topFolder(path) {
  const slash = path.indexOf('/');
  return slash === -1 ? '.' : path.slice(0, slash);
}

/**
 * Call `visit` for every relative import of the linted file that resolves to a project
 * file: `import`, `export … from` and `import('…')` with a literal specifier.
 * @param {import('eslint').Rule.RuleContext} context
 * @param {string} root
 * @param {(entry: LintedImport) => void} visit
 * @returns {import('eslint').Rule.RuleListener}
 */
export function forEachImport(context, root, visit) {
  const check = (
    /** @type {import('estree').Node | null | undefined} */ source,
    /** @type {boolean} */ typeOnly,
    /** @type {boolean} */ dynamic,
  ) => {
    if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
    const target = resolveSpecifier(context.filename, source.value);
    if (target === undefined) return;
    const targetPath = projectPath(root, target);
    if (targetPath === undefined) return;
    visit({
      node: source,
      specifier: source.value,
      target,
      targetPath,
      targetFolder: topFolder(targetPath),
      typeOnly,
      dynamic,
    });
  };
  /** @param {unknown} node */
  const isType = (node) =>
    /** @type {{ importKind?: string, exportKind?: string }} */ (node).importKind === 'type' ||
    /** @type {{ importKind?: string, exportKind?: string }} */ (node).exportKind === 'type';
  return {
    ImportDeclaration: (node) => check(node.source, isType(node), false),
    ExportNamedDeclaration: (node) => check(node.source, isType(node), false),
    ExportAllDeclaration: (node) => check(node.source, isType(node), false),
    ImportExpression: (node) => check(node.source, false, true),
  };
}

/**
 * The project root a rule works against: its `root` option, else ESLint's working
 * directory.
 * @param {import('eslint').Rule.RuleContext} context
 * @returns {string}
 */
export function rootOf(context) {
  const options = /** @type {{ root?: string } | undefined} */ (context.options[0]);
  return options?.root ?? context.cwd;
}
