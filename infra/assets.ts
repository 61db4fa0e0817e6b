/** World assets (images, audio, fonts) and game builds, served through the platform's routes. */
export const assets = new sst.aws.Bucket('Assets');
export const games = new sst.aws.Bucket('Games');
