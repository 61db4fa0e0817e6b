import { WORLD_SCHEMA_VERSION } from './world-schema.ts';

export type WorldVersionStatus = 'current' | 'older' | 'newer' | 'missing' | 'unrecognised';

export interface WorldVersionCheck {
  readonly status: WorldVersionStatus;
  /** A plain explanation when the status is not `current`. */
  readonly message?: string;
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]*)?$/;
const CURRENT = WORLD_SCHEMA_VERSION.split('.').map(Number) as [number, number, number];

/**
 * Recognises the `version` of a world. Only 20.0.0 is read; every other value is named for what it
 * is (older, newer, missing, not a version) instead of being accepted silently.
 */
export function checkWorldVersion(version: unknown): WorldVersionCheck {
  if (version === undefined || version === null) {
    return { status: 'missing', message: `version is required; this platform reads WorldDefinition version ${WORLD_SCHEMA_VERSION}` };
  }
  if (typeof version !== 'string') {
    return {
      status: 'unrecognised',
      message: `version must be the string "${WORLD_SCHEMA_VERSION}", not ${typeof version === 'number' ? `the number ${version}` : `a ${typeof version}`}`,
    };
  }
  if (version === WORLD_SCHEMA_VERSION) return { status: 'current' };
  const match = SEMVER.exec(version.trim().replace(/^v/i, ''));
  if (!match) {
    return { status: 'unrecognised', message: `"${version}" is not a WorldDefinition version; this platform reads version ${WORLD_SCHEMA_VERSION}` };
  }
  const parts = [Number(match[1]), Number(match[2]), Number(match[3])];
  let order = 0;
  for (let index = 0; index < 3 && order === 0; index += 1) order = Math.sign((parts[index] ?? 0) - (CURRENT[index] ?? 0));
  if (order < 0) {
    return {
      status: 'older',
      message: `version ${version} is an older WorldDefinition format; this platform reads version ${WORLD_SCHEMA_VERSION} only. Open and re-save the world in the current editor (or update its fields to ${WORLD_SCHEMA_VERSION}) and set version to "${WORLD_SCHEMA_VERSION}"`,
    };
  }
  if (order > 0) {
    return {
      status: 'newer',
      message: `version ${version} is newer than this platform understands; it reads WorldDefinition version ${WORLD_SCHEMA_VERSION}`,
    };
  }
  return { status: 'unrecognised', message: `"${version}" is not written the way this platform expects; use "${WORLD_SCHEMA_VERSION}"` };
}
