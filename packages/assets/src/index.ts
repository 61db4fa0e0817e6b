export * from './object-store.ts';
export * from './s3-object-store.ts';
export * from './content-type.ts';
export * from './game-publish.ts';
export * from './profile-picture.ts';
export * from './width-variant.ts';
