export { type ImportAsset, type ImportChange, type ImportChangeKind, type ImportFormat, type ImportReport, reportLines } from './import-report.ts';
export { type ImportOptions, type ImportResult, importWorld } from './import-world.ts';
export { decodeBase64Utf8, encodeBase64Utf8, isPng, pngWithText, PngTextError, readPngText } from './png-text.ts';
export { uuidFromText } from './world-versions.ts';
