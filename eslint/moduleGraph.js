/**
 * The project's module graph, read from the files on disk: each module's relative imports,
 * resolved the way Node resolves them after compilation (`./x.js` is `./x.ts` in the
 * source). Built lazily and at most once per file per lint run, so a rule that needs the
 * whole graph (import cycles) does not parse a file once for every file that imports it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

/**
 * @typedef {object} ModuleImport
 * @property {string} specifier the string as written
 * @property {string | undefined} target the resolved absolute file, when it is in the project
 * @property {boolean} typeOnly true for `import type` / `export type`, erased at compile time
 * @property {boolean} dynamic true for `import('…')`, evaluated only when it runs
 */

const SOURCE_EXTENSIONS = [
  ['.js', '.ts'],
  ['.mjs', '.mts'],
  ['.cjs', '.cts'],
];

/**
 * The source file a relative specifier names, or undefined for a package or a file that
 * does not exist (the type checker reports those).
 * @param {string} fromFile absolute path of the importing file
 * @param {string} specifier
 * @returns {string | undefined}
 */
export function resolveSpecifier(fromFile, specifier) {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [];
  for (const [compiled, source] of SOURCE_EXTENSIONS) {
    if (base.endsWith(compiled)) candidates.push(base.slice(0, -compiled.length) + source);
  }
  candidates.push(base, `${base}.ts`, join(base, 'index.ts'));
  return candidates.find((file) => existsSync(file) && statSync(file).isFile());
}

/**
 * The imports of one source text, statically: declarations at the top level, re-exports,
 * and `import('literal')` anywhere.
 * @param {string} file absolute path (for resolution and script kind)
 * @param {string} text
 * @returns {ModuleImport[]}
 */
export function readImports(file, text) {
  const kind = /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  /** @type {ModuleImport[]} */
  const imports = [];
  const add = (/** @type {string} */ specifier, typeOnly = false, dynamic = false) =>
    imports.push({ specifier, target: resolveSpecifier(file, specifier), typeOnly, dynamic });
  const visit = (/** @type {ts.Node} */ node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.importClause?.isTypeOnly === true);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      add(node.arguments[0].text, false, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return imports;
}

/**
 * A lazily built graph over the files of one project. Edges are the run-time imports
 * (static, not type-only): the ones that decide module evaluation order, which is what a
 * cycle breaks.
 */
export class ModuleGraph {
  /** @type {Map<string, string[]>} */
  #edges = new Map();
  /** @type {Map<string, number>} */
  #index = new Map();
  /** @type {Map<string, number>} */
  #low = new Map();
  /** @type {Map<string, string[]>} */
  #component = new Map();
  #counter = 0;

  /**
   * The files `file` imports at run time, sorted, each once.
   * @param {string} file
   * @returns {string[]}
   */
  edges(file) {
    let edges = this.#edges.get(file);
    if (!edges) {
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        // a file that vanished during the run has no edges
      }
      const targets = readImports(file, text)
        .filter((i) => !i.typeOnly && !i.dynamic && i.target !== undefined)
        .map((i) => /** @type {string} */ (i.target));
      edges = [...new Set(targets)].sort();
      this.#edges.set(file, edges);
    }
    return edges;
  }

  /**
   * The strongly connected component of `file` (the files that import it and that it
   * imports, transitively), sorted. A file on no cycle is alone in its component.
   * @param {string} file
   * @returns {string[]}
   */
  component(file) {
    if (!this.#component.has(file)) this.#tarjan(file);
    return /** @type {string[]} */ (this.#component.get(file));
  }

  /**
   * The cycle a component is reported by: the shortest path from its first file (by name)
   * back to itself, so that every lint run names the same import as the one closing it.
   * Undefined when `file` is on no cycle.
   * @param {string} file
   * @returns {string[] | undefined} the files of the cycle, the first repeated at the end
   */
  cycleThrough(file) {
    const component = this.component(file);
    const first = component[0];
    if (first === undefined) return undefined;
    if (component.length === 1 && !this.edges(first).includes(first)) return undefined;
    const members = new Set(component);
    /** @type {Map<string, string>} */
    const previous = new Map();
    const queue = [first];
    for (let i = 0; i < queue.length; i++) {
      const node = /** @type {string} */ (queue[i]);
      for (const next of this.edges(node)) {
        if (!members.has(next)) continue;
        if (next === first) {
          const path = [node];
          while (path[0] !== first)
            path.unshift(/** @type {string} */ (previous.get(path[0] ?? first)));
          return [...path, first];
        }
        if (!previous.has(next)) {
          previous.set(next, node);
          queue.push(next);
        }
      }
    }
    return undefined;
  }

  /**
   * Tarjan's algorithm from `start`, iteratively (import chains are deeper than a safe
   * recursion depth would need, and this keeps the stack flat).
   * @param {string} start
   */
  #tarjan(start) {
    /** @type {string[]} */
    const stack = [];
    const onStack = new Set();
    /** @type {{ node: string, next: number }[]} */
    const work = [{ node: start, next: 0 }];
    const open = (/** @type {string} */ node) => {
      this.#index.set(node, this.#counter);
      this.#low.set(node, this.#counter);
      this.#counter++;
      stack.push(node);
      onStack.add(node);
    };
    open(start);
    while (work.length > 0) {
      const frame = /** @type {{ node: string, next: number }} */ (work[work.length - 1]);
      const edges = this.edges(frame.node);
      if (frame.next < edges.length) {
        const next = /** @type {string} */ (edges[frame.next++]);
        if (!this.#index.has(next)) {
          open(next);
          work.push({ node: next, next: 0 });
        } else if (onStack.has(next)) {
          this.#lower(frame.node, /** @type {number} */ (this.#index.get(next)));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) this.#lower(parent.node, /** @type {number} */ (this.#low.get(frame.node)));
      if (this.#low.get(frame.node) === this.#index.get(frame.node)) {
        /** @type {string[]} */
        const component = [];
        let member;
        do {
          member = /** @type {string} */ (stack.pop());
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        component.sort();
        for (const m of component) this.#component.set(m, component);
      }
    }
  }

  /**
   * @param {string} node
   * @param {number} value
   */
  #lower(node, value) {
    if (value < /** @type {number} */ (this.#low.get(node))) this.#low.set(node, value);
  }
}

/** @type {Map<string, ModuleGraph>} */
const graphs = new Map();

/**
 * The graph for the project at `root`, one per root for the life of the process (a lint
 * run). Rule tests build their projects under fresh directories, so each gets its own.
 * @param {string} root
 * @returns {ModuleGraph}
 */
export function graphFor(root) {
  let graph = graphs.get(root);
  if (!graph) {
    graph = new ModuleGraph();
    graphs.set(root, graph);
  }
  return graph;
}
