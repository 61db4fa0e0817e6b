import type { Config } from '@yumina/config';
import { createIdentity, type ReplicaIdentity } from '@yumina/telemetry';
import pino from 'pino';

export type { ReplicaIdentity };

/** Region, replica id, deployment id and this process's boot id: on every log line and telemetry record. */
export function replicaIdentity(config: Config): ReplicaIdentity {
  return createIdentity(config.identity);
}

/** pino JSON lines tagged with the replica identity. */
export function createLogger(config: Config, identity: ReplicaIdentity, destination?: pino.DestinationStream): pino.Logger {
  const options = { level: config.logLevel, base: { ...identity } };
  return destination ? pino(options, destination) : pino(options);
}
