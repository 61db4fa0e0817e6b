import { api } from './api';
import { functions } from './functions';

/** One origin: the router sends each function's path to its Lambda, /api and /health to the container, the rest to the web app. */
export const router = new sst.aws.Router('Router');
router.route('/api/auth/jwks', functions.jwks.url);
router.route('/api/worlds/validate', functions.worldValidate.url);
router.route('/api', api.url);
router.route('/health', api.url);

export const web = new sst.aws.StaticSite('Web', {
  path: 'web',
  build: { command: 'npm run build', output: 'dist' },
  router: { instance: router },
});
