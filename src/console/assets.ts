/**
 * The page's own files, and nothing else: the HTML shell, one stylesheet and the modules of
 * src/console/web, all from this package (no CDN, no remote font: the console works offline).
 *
 * `npm run build` compiles the modules to dist/console/web beside this file. Run from source
 * (`node src/cli.ts console`, the tests), there are only the .ts files: each is compiled when
 * first asked for, with the TypeScript compiler the source checkout has as a dev dependency.
 */

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const WEB = new URL('./web/', import.meta.url);

/** The names a request may ask for: one flat directory, no path, no dot files. */
const ASSET_NAME = /^[a-z][a-z0-9-]*\.(js|css)$/;

const TYPES = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

export interface Asset {
  type: string;
  body: string;
}

export class Assets {
  readonly #cache = new Map<string, Promise<Asset | undefined>>();

  /** The asset of that name, or undefined for any name that is not one. */
  get(name: string): Promise<Asset | undefined> {
    if (!ASSET_NAME.test(name)) return Promise.resolve(undefined);
    let asset = this.#cache.get(name);
    if (asset === undefined) {
      asset = load(name);
      this.#cache.set(name, asset);
    }
    return asset;
  }

  /** The HTML shell: a heading and the module that renders the rest. */
  async page(): Promise<string> {
    return readFile(new URL('index.html', WEB), 'utf8');
  }
}

async function load(name: string): Promise<Asset | undefined> {
  const extension = name.endsWith('.js') ? 'js' : 'css';
  const file = new URL(name, WEB);
  if (existsSync(file)) return { type: TYPES[extension], body: await readFile(file, 'utf8') };
  if (extension !== 'js') return undefined;
  const source = new URL(name.replace(/\.js$/, '.ts'), WEB);
  if (!existsSync(source)) return undefined;
  return { type: TYPES.js, body: await compile(fileURLToPath(source)) };
}

/** A page module compiled as `npm run build` compiles it (src/console/web/tsconfig.json). */
async function compile(path: string): Promise<string> {
  const { default: ts } = await import('typescript');
  const output = ts.transpileModule(await readFile(path, 'utf8'), {
    fileName: path,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      rewriteRelativeImportExtensions: true,
      verbatimModuleSyntax: true,
    },
  });
  return output.outputText;
}
