/**
 * Where a model's file is, and whether it changed.
 *
 * `model_path` resolves under the steps root (the YAML's folder for the CLI), a bare
 * `model_name` to `<models dir>/<model_name><ext>`. Either way the real path (symlinks
 * resolved) must stay inside that folder: definitions may come from elsewhere (a config
 * push to a device), and `model_path: ../../etc/…` must not make the runtime read — or
 * report the hash of — files it was never meant to serve.
 *
 * This runs before every inference, so it is synchronous and short: one `stat` of the path
 * as written, and the `realpath` checks only when that stat differs from the last one seen
 * for the path (a new or replaced file, or a symlink pointed elsewhere). The async forms
 * would each cost a thread-pool round trip.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep, win32 } from 'node:path';
import { InferenceError } from './errors.js';

/** A located model file. */
export interface LocatedModel {
  /** Real path. */
  path: string;
  /** Changes whenever the file is replaced or rewritten (inode, size, mtime, ctime). */
  stamp: string;
}

/** Where to look for model files. */
export interface ModelFolders {
  /** Folder `model_path` values resolve under. */
  root: string;
  /** Folder of `<model_name><ext>` files. */
  modelsDir: string | undefined;
}

const notFound = (message: string, options: { cause?: unknown } = {}) =>
  new InferenceError('MODEL_NOT_FOUND', message, options);
const badPath = (message: string) => new InferenceError('MODEL_PATH_INVALID', message);

/** True when `path` lies strictly inside folder `base`. */
function isInside(base: string, path: string): boolean {
  const inside = relative(base, path);
  return !(inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside));
}

function realFolder(folder: string, what: string): string {
  try {
    return realpathSync.native(folder);
  } catch (cause) {
    throw notFound(`the ${what} ${folder} does not exist`, { cause });
  }
}

/** Checked locations by the path as written, valid while its stat stamp is unchanged. */
export type LocationCache = Map<string, LocatedModel & { seen: string }>;

const stampOf = (stat: { ino: number; size: number; mtimeMs: number; ctimeMs: number }) =>
  `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;

/**
 * Locate the file of model `name` (with `modelPath` from ai_config, if set). `cache` keeps
 * the checked real path of each path as written, so an unchanged file costs one `stat`.
 */
export function locateModelFile(
  name: string,
  modelPath: string | undefined,
  extension: string,
  folders: ModelFolders,
  cache?: LocationCache,
): LocatedModel {
  let base: string;
  let candidate: string;
  let what: string;
  if (modelPath !== undefined) {
    if (isAbsolute(modelPath) || win32.isAbsolute(modelPath)) {
      throw badPath(`model_path '${modelPath}' must be relative to the steps root`);
    }
    base = resolve(folders.root);
    candidate = resolve(base, modelPath);
    what = 'steps root';
  } else {
    if (folders.modelsDir === undefined) {
      throw notFound(
        `model '${name}' has no model_path and no models directory is configured (createRuntime({ inference: { modelsDir } }) or SAFFRON_MODELS_DIR)`,
      );
    }
    if (/[/\\]/.test(name) || name === '.' || name === '..') {
      throw badPath(`model_name '${name}' cannot name a file in the models directory`);
    }
    base = resolve(folders.modelsDir);
    candidate = join(base, `${name}${extension}`);
    what = 'models directory';
  }
  if (!isInside(base, candidate)) {
    throw badPath(`model '${name}': ${candidate} is outside the ${what} ${base}`);
  }
  const seen = statSync(candidate, { throwIfNoEntry: false });
  const cached = cache?.get(candidate);
  if (seen !== undefined && cached !== undefined && cached.seen === stampOf(seen)) {
    return { path: cached.path, stamp: cached.stamp };
  }
  const realBase = realFolder(base, what);
  let real: string;
  try {
    real = realpathSync.native(candidate);
  } catch {
    throw notFound(`model '${name}': no file ${candidate}`);
  }
  if (!isInside(realBase, real)) {
    throw badPath(`model '${name}': ${candidate} is outside the ${what} ${base}`);
  }
  const stat = statSync(real, { throwIfNoEntry: false });
  if (stat === undefined || !stat.isFile())
    throw notFound(`model '${name}': ${candidate} is not a file`);
  const located = { path: real, stamp: stampOf(stat) };
  if (seen !== undefined) cache?.set(candidate, { ...located, seen: stampOf(seen) });
  return located;
}
