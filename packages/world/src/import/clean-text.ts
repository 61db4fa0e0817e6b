import type { PathSegment } from '../schema/issue-path.ts';
import { cleanUnsafeText, isUnsafeText } from '../text/unsafe-text.ts';
import type { ReportBuilder } from './import-report.ts';

/**
 * Imported text passes the same text guard as every JSON body (text/unsafe-text.ts): U+0000 and
 * lone surrogates cannot be stored (a card named with U+0000 gave a 500; one in a greeting broke
 * every new session; a lone surrogate made the world unsaveable). A request body with them is
 * refused with its path; an imported file is a document, so its text is cleaned instead: U+0000
 * removed, a lone surrogate replaced by U+FFFD, and a report line names each path. Object keys
 * (interface file names, say) are cleaned the same way. Works in place on the converted world.
 */
export function cleanImportedText(world: Record<string, unknown>, report: ReportBuilder): void {
  const path: PathSegment[] = [];
  const note = (nul: number, surrogates: number, what = '') => {
    const parts = [];
    if (nul > 0) parts.push(`${nul} U+0000 character${nul === 1 ? '' : 's'} removed`);
    if (surrogates > 0) parts.push(`${surrogates} unpaired surrogate${surrogates === 1 ? '' : 's'} replaced by U+FFFD`);
    report.converted(path, `${what}${parts.join(', ')} (text that cannot be stored)`);
  };
  const visit = (container: Record<string, unknown> | unknown[]): void => {
    if (Array.isArray(container)) {
      for (let index = 0; index < container.length; index++) {
        const value = container[index];
        path.push(index);
        if (typeof value === 'string') {
          if (isUnsafeText(value)) {
            const cleaned = cleanUnsafeText(value);
            container[index] = cleaned.text;
            note(cleaned.nul, cleaned.surrogates);
          }
        } else if (typeof value === 'object' && value !== null) visit(value as Record<string, unknown> | unknown[]);
        path.pop();
      }
      return;
    }
    for (const key of Object.keys(container)) {
      let name = key;
      if (isUnsafeText(key)) {
        const cleaned = cleanUnsafeText(key);
        name = cleaned.text;
        const value = container[key];
        delete container[key];
        if (!(name in container)) container[name] = value;
        path.push(name);
        note(cleaned.nul, cleaned.surrogates, 'in the field name: ');
        path.pop();
        if (container[name] !== value) continue;
      }
      const value = container[name];
      path.push(name);
      if (typeof value === 'string') {
        if (isUnsafeText(value)) {
          const cleaned = cleanUnsafeText(value);
          container[name] = cleaned.text;
          note(cleaned.nul, cleaned.surrogates);
        }
      } else if (typeof value === 'object' && value !== null) visit(value as Record<string, unknown> | unknown[]);
      path.pop();
    }
  };
  visit(world);
}
