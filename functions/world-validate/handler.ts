import type { FunctionSetting } from '@yumina/config';
import { DEPLOYED_FUNCTION_SERVER, lambdaHandler } from '@yumina/http';
import plugin from './plugin.ts';

/** The validator reads no setting: it needs no database, store or key. */
export const SETTINGS = [] as const satisfies readonly FunctionSetting[];

/** The deployed entry (FUNCTION_ROUTES' handler). */
export const handler = lambdaHandler(plugin, () => ({}), DEPLOYED_FUNCTION_SERVER);
