import type { PathSegment } from '../schema/issue-path.ts';
import { formatIssuePath } from '../schema/issue-path.ts';
import type { ImportAsset, ReportBuilder } from './import-report.ts';

/**
 * The public format names uploaded files `@asset:<id>`; this platform writes `asset://<id>`
 * (docs/SANDBOX.md). Every string in the world is rewritten; each asset is listed once with every
 * path that names it, because the file itself must be uploaded here (the new upload's id then
 * replaces `<id>`).
 */
const PUBLIC_ASSET = /@asset:([A-Za-z0-9_-]+)/g;

export function convertAssetLinks(world: Record<string, unknown>, report: ReportBuilder): ImportAsset[] {
  const assets = new Map<string, { id: string; reference: string; paths: string[] }>();
  // One path stack for the whole walk; a path is only built where a link is found. Strings are replaced in place.
  const path: PathSegment[] = [];
  const rewrite = (value: string): string | undefined => {
    const ids: string[] = [];
    const rewritten = value.replace(PUBLIC_ASSET, (_match, id: string) => {
      ids.push(id);
      return `asset://${id}`;
    });
    if (ids.length === 0) return undefined;
    const where = formatIssuePath(path);
    for (const id of ids) {
      const asset = assets.get(id) ?? { id, reference: `asset://${id}`, paths: [] };
      if (!asset.paths.includes(where)) asset.paths.push(where);
      assets.set(id, asset);
    }
    report.converted(path, [...new Set(ids)].map((id) => `@asset:${id} → asset://${id}`).join(', '));
    return rewritten;
  };
  const visit = (container: Record<string, unknown> | unknown[]): void => {
    const keys = Array.isArray(container) ? container.keys() : Object.keys(container);
    for (const key of keys) {
      const value = (container as Record<string | number, unknown>)[key];
      path.push(key);
      if (typeof value === 'string') {
        if (value.includes('@asset:')) {
          const rewritten = rewrite(value);
          if (rewritten !== undefined) (container as Record<string | number, unknown>)[key] = rewritten;
        }
      } else if (typeof value === 'object' && value !== null) visit(value as Record<string, unknown> | unknown[]);
      path.pop();
    }
  };
  visit(world);
  return [...assets.values()];
}
