// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import saffron from './eslint/plugin.js';

const root = import.meta.dirname;

/**
 * Which top-level folders each folder may import (docs/architecture.md#tiers). Folders not
 * listed here (test, bench, scripts, examples) may import anything.
 */
const tiers = {
  runtime: [],
  actors: ['runtime'],
  gateway: ['actors', 'runtime'],
  edge: ['actors', 'runtime'],
  migrations: ['runtime'],
  bin: ['gateway', 'edge', 'actors', 'runtime', 'migrations'],
  '.': ['runtime', 'actors'],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.scratch/**', 'bin/saffron.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['examples/*/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/only-throw-error': 'error',
    },
  },
  {
    files: ['**/*.ts'],
    plugins: { saffron },
    rules: {
      'saffron/tier-direction': ['error', { root, tiers }],
      'saffron/public-entry': [
        'error',
        {
          root,
          folders: Object.keys(tiers).filter((folder) => folder !== '.'),
          exempt: ['test', 'bench', 'scripts', 'examples'],
          // shipped migrations are never edited, so they keep the path they were written with
          allow: [
            { from: 'migrations', to: 'runtime/store/migrate/migration.ts' },
            // the error classes import nothing: the CLI reports errors without loading the
            // engine, so `--version` and `--help` start fast
            { from: 'bin', to: 'runtime/errors.ts' },
          ],
        },
      ],
      'saffron/no-import-cycles': ['error', { root }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
