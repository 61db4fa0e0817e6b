export * from './schema/index.ts';
export * from './engine/index.ts';
export * from './import/index.ts';
export * from './text/unsafe-text.ts';
