#!/usr/bin/env node
// Launcher for the `saffron` CLI. In a checkout (the TypeScript source is present) it runs the
// source through tsx, so the CLI never lags behind an edit; an installed package ships only
// the compiled dist/ and runs that.
import { existsSync } from 'node:fs';

const source = new URL('./cli.ts', import.meta.url);
let cli;
if (existsSync(source)) {
  const { tsImport } = await import('tsx/esm/api');
  cli = await tsImport(source.href, import.meta.url);
} else {
  cli = await import(new URL('../dist/bin/cli.js', import.meta.url).href);
}
process.exitCode = await cli.main(process.argv.slice(2));
