import { lambdaHandler } from '@yumina/http';
import plugin, { type WorldUpdatesOptions } from './plugin.ts';

/**
 * The Lambda entry: the same plugin behind @fastify/aws-lambda. The deployment supplies the
 * options (database pool, store, session lookup) once per cold start; no route logic here.
 */
export function createHandler(loadOptions: () => WorldUpdatesOptions | Promise<WorldUpdatesOptions>) {
  return lambdaHandler(plugin, loadOptions);
}
