/**
 * One object bucket: game builds under `games/<game>/` and world assets under
 * `assets/<world>/<asset>`, served through the platform's delivery and asset routes (never public).
 */
export const objects = new sst.aws.Bucket('Objects');
