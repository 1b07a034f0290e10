/**
 * Every name the package exports carries a TSDoc comment. The entry points are the
 * `exports` of package.json (the root `index.ts` and each top-level folder's `index.ts`,
 * whose explicit lists are the public surface); the compiler resolves each listed name to the
 * declaration behind it, so a re-export is judged by the comment where the name is declared.
 *
 * A doc comment directly above a module's first statement, with no other above it, is the
 * module's header (every module opens with one), so it does not count as the export's own.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The source file of each package entry point: `./dist/runtime/index.js` → `runtime/index.ts`. */
function packageEntries(): string[] {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
    exports: Record<string, { default: string }>;
  };
  return Object.values(pkg.exports).map(({ default: built }) =>
    built.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'),
  );
}

const options: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  resolveJsonModule: true,
  types: ['node'],
};

/** One exported name, where it is declared, and what its documentation lacks if anything. */
interface ExportDoc {
  name: string;
  file: string;
  missing?: 'doc comment' | 'own doc comment (only the module header is above it)';
}

/** The node a declaration's doc comment is written above (a variable's is its statement). */
function commentHost(declaration: ts.Declaration): ts.Node {
  const list = declaration.parent;
  return ts.isVariableDeclaration(declaration) && ts.isVariableDeclarationList(list)
    ? list.parent
    : declaration;
}

/** Whether a doc comment with some text (not only tags) is written above `declaration`. */
function hasDocText(declaration: ts.Declaration): boolean {
  return ts
    .getJSDocCommentsAndTags(declaration)
    .some((doc) => ts.isJSDoc(doc) && Boolean(ts.getTextOfJSDocComment(doc.comment)?.trim()));
}

/**
 * Whether the one doc comment above `declaration` is its module's header: the declaration is
 * the file's first statement with a single doc comment before it. (The compiler keeps only
 * the last comment above a node, so the comments are counted in the text.)
 */
function onlyModuleHeader(declaration: ts.Declaration): boolean {
  const host = commentHost(declaration);
  const source = declaration.getSourceFile();
  if (source.statements[0] !== host) return false;
  const comments = ts.getLeadingCommentRanges(source.text, host.pos) ?? [];
  return comments.filter((c) => source.text.startsWith('/**', c.pos)).length === 1;
}

/**
 * Every name `entry` (a path under `base`) exports, resolved through re-exports to its
 * declarations; files are named relative to `base`.
 */
function exportDocs(program: ts.Program, base: string, entry: string): ExportDoc[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(base + entry);
  if (!source) throw new Error(`${entry} is not part of the program`);
  const module = checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`${entry} is not a module`);
  return checker.getExportsOfModule(module).map((exported) => {
    const symbol =
      exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declarations = symbol.getDeclarations() ?? [];
    const documented = declarations.filter(hasDocText);
    const file = relative(base, (declarations[0]?.getSourceFile() ?? source).fileName);
    const doc: ExportDoc = { name: exported.getName(), file };
    if (documented.length === 0 || symbol.getDocumentationComment(checker).length === 0) {
      doc.missing = 'doc comment';
    } else if (documented.every(onlyModuleHeader)) {
      doc.missing = 'own doc comment (only the module header is above it)';
    }
    return doc;
  });
}

/** A program over in-memory files under `/mem/`, for the self-check. */
function memoryProgram(files: Record<string, string>): ts.Program {
  const host = ts.createCompilerHost(options);
  const texts = new Map(Object.entries(files).map(([rel, text]) => [`/mem/${rel}`, text]));
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const directoryExists = host.directoryExists?.bind(host);
  host.getSourceFile = (name, version, ...rest) => {
    const text = texts.get(name);
    return text === undefined
      ? getSourceFile(name, version, ...rest)
      : ts.createSourceFile(name, text, version, true);
  };
  host.fileExists = (name) => texts.has(name) || fileExists(name);
  host.readFile = (name) => texts.get(name) ?? ts.sys.readFile(name);
  host.directoryExists = (name) => name === '/mem' || (directoryExists?.(name) ?? false);
  return ts.createProgram({ rootNames: [...texts.keys()], options, host });
}

describe('public API docs', () => {
  it('finds exactly the undocumented exports, through re-exports', () => {
    const lines = (...text: string[]) => text.join('\n');
    const program = memoryProgram({
      'index.ts': lines(
        '/** The entry. */',
        "export { documented, bare, tagsOnly, Kind, type Shape } from './parts.js';",
        "export { headerOnly, Widget } from './header.js';",
        "export * from './more.js';",
      ),
      'parts.ts': lines(
        '/** A module header. */',
        "import { x } from './more.js';",
        '/** A documented constant. */',
        'export const documented = x;',
        'export function bare(): void {}',
        '/** @deprecated */',
        'export function tagsOnly(): void {}',
        '/** A documented enum. */',
        'export enum Kind { A }',
        '/** A documented shape. */',
        'export interface Shape { a: number }',
      ),
      'header.ts': lines(
        '/** A module header, and nothing for the function. */',
        'export function headerOnly(): void {}',
        '/** A documented class. */',
        'export class Widget {}',
      ),
      'more.ts': lines(
        '/** A module header. */',
        '',
        '/** A documented x, though the module header is above it too. */',
        'export const x = 1;',
        'export type Loose = string;',
      ),
    });
    const undocumented = exportDocs(program, '/mem/', 'index.ts').filter((d) => d.missing);
    expect(undocumented).toEqual([
      { name: 'bare', file: 'parts.ts', missing: 'doc comment' },
      { name: 'tagsOnly', file: 'parts.ts', missing: 'doc comment' },
      {
        name: 'headerOnly',
        file: 'header.ts',
        missing: 'own doc comment (only the module header is above it)',
      },
      { name: 'Loose', file: 'more.ts', missing: 'doc comment' },
    ]);
  });

  it('documents every export of the package', () => {
    const entries = packageEntries();
    const folders = ['runtime', 'actors', 'gateway', 'edge', 'migrations'];
    expect(entries).toEqual(
      expect.arrayContaining(['index.ts', ...folders.map((f) => `${f}/index.ts`)]),
    );
    const program = ts.createProgram({ rootNames: entries.map((e) => root + e), options });
    const missing = new Map<string, string>();
    for (const entry of entries) {
      const docs = exportDocs(program, root, entry);
      expect(docs.length, `${entry} exports nothing`).toBeGreaterThan(0);
      for (const { name, file, missing: what } of docs) {
        const key = `${name} (${file})`;
        if (what && !missing.has(key)) missing.set(key, `${key}: no ${what}, exported by ${entry}`);
      }
    }
    expect([...missing.values()]).toEqual([]);
  });
});
