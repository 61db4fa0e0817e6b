import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** Tags every telemetry record and log line of one process. */
export interface ReplicaIdentity {
  region: string;
  replicaId: string;
  deploymentId: string;
  /** Fresh per process start: two records with the same bootId come from the same process lifetime. */
  bootId: string;
}

export interface IdentityInput {
  region: string;
  /** Unset: `<hostname>-<pid>`. */
  replicaId?: string | undefined;
  deploymentId: string;
}

/** One boot id per process, created when this module is first loaded. */
export const BOOT_ID: string = randomUUID();

export function createIdentity(input: IdentityInput): ReplicaIdentity {
  return Object.freeze({
    region: input.region,
    replicaId: input.replicaId || `${hostname()}-${process.pid}`,
    deploymentId: input.deploymentId,
    bootId: BOOT_ID,
  });
}
