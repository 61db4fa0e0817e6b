export * from './credits.ts';
export * from './prices.ts';
