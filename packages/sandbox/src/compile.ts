/**
 * Compiles a world's rootComponent in the parent page with sucrase: TypeScript and JSX are
 * stripped/turned into React.createElement calls, ES imports into a tiny require() the frame
 * runtime provides. The output is a script text that becomes part of the frame document.
 */
import { transform } from 'sucrase';

export interface RootComponentLike {
  entryFile: string;
  files: Record<string, string>;
}

export class CompileError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'CompileError';
  }
}

const SOURCE = /\.(tsx|ts|jsx|js|mjs)$/;

/** Neutralises sequences that would end or confuse an inline <script> element. */
export function scriptSafe(code: string): string {
  return code.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

function normalise(path: string): string {
  return path.replace(/^\.?\/+/, '');
}

/**
 * Returns the text of the modules script: one call to `__yuminaDefine` with a factory per source
 * file, keyed by its normalised path. Throws CompileError for a missing entry file or bad syntax.
 */
export function compileRootComponent(root: RootComponentLike): { script: string; entryFile: string } {
  const entryFile = normalise(root.entryFile);
  const files = Object.entries(root.files)
    .map(([path, source]) => [normalise(path), source] as const)
    .filter(([path]) => SOURCE.test(path));
  if (!files.some(([path]) => path === entryFile)) throw new CompileError(entryFile, 'the entry file is missing');
  const parts: string[] = [];
  for (const [path, source] of files) {
    let code: string;
    try {
      code = transform(source, {
        transforms: path.endsWith('.ts') ? ['typescript', 'imports'] : ['typescript', 'jsx', 'imports'],
        jsxRuntime: 'classic',
        jsxPragma: 'React.createElement',
        jsxFragmentPragma: 'React.Fragment',
        production: true,
        filePath: path,
      }).code;
    } catch (error) {
      throw new CompileError(path, error instanceof Error ? error.message : String(error));
    }
    parts.push(`${JSON.stringify(path)}: function (module, exports, require, location) {\n${code}\n}`);
  }
  return { entryFile, script: scriptSafe(`__yuminaDefine({\n${parts.join(',\n')}\n});`) };
}

/** Class-name candidates in world source, for the utility stylesheet. */
export function classCandidates(root: RootComponentLike): string[] {
  const found = new Set<string>();
  for (const source of Object.values(root.files)) {
    for (const token of source.split(/[\s"'`{}(),;<>=]+/)) {
      if (token.length > 0 && token.length < 120 && /^[!-]?[a-z@[]/.test(token)) found.add(token);
    }
  }
  return [...found];
}
