export * from './types.ts';
export * from './memory.ts';
export * from './redis.ts';
export * from './fallback.ts';
export * from './open.ts';
export * from './leader.ts';
