/**
 * A small project on disk for the import rules: they resolve specifiers against real files,
 * so each test file writes its own tree under a fresh temporary directory.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, it } from 'vitest';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

/** A project tree: relative path → source text. */
export type ProjectFiles = Record<string, string>;

/** A project written to a temporary directory. */
export interface FixtureProject {
  root: string;
  /** The absolute path of one of its files. */
  path(rel: string): string;
  /** The text of one of its files, as written. */
  code(rel: string): string;
  remove(): void;
}

/** Write `files` to a fresh temporary directory. */
export function writeProject(files: ProjectFiles): FixtureProject {
  const root = mkdtempSync(join(tmpdir(), 'saffron-lint-'));
  for (const [rel, text] of Object.entries(files)) {
    const file = join(root, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return {
    root,
    path: (rel) => join(root, rel),
    code: (rel) => readFileSync(join(root, rel), 'utf8'),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A RuleTester that parses TypeScript (for `import type`). */
export function typeScriptRuleTester(): RuleTester {
  return new RuleTester({
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2023, sourceType: 'module' },
  });
}
