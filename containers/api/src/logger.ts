import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '@yumina/config';
import pino from 'pino';

export interface ReplicaIdentity {
  region: string;
  replicaId: string;
  deploymentId: string;
  /** Fresh for every process start. */
  bootId: string;
}

export function replicaIdentity(config: Config): ReplicaIdentity {
  return {
    region: config.identity.region,
    replicaId: config.identity.replicaId ?? `${hostname()}-${process.pid}`,
    deploymentId: config.identity.deploymentId,
    bootId: randomUUID(),
  };
}

/** pino JSON lines tagged with the replica identity. */
export function createLogger(config: Config, identity: ReplicaIdentity, destination?: pino.DestinationStream): pino.Logger {
  const options = { level: config.logLevel, base: { ...identity } };
  return destination ? pino(options, destination) : pino(options);
}
