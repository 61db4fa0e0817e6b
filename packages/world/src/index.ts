export * from './schema/index.ts';
export * from './engine/index.ts';
