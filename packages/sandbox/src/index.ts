export * from './state.ts';
export * from './members.ts';
export * from './protocol.ts';
export * from './compat-fetch.ts';
export * from './asset-url.ts';
export * from './host-policy.ts';
export * from './platform-ids.ts';
export * from './api-path.ts';
