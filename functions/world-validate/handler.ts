import { lambdaHandler } from '@yumina/http';
import plugin from './plugin.ts';

export const handler = lambdaHandler(plugin, () => ({}));
