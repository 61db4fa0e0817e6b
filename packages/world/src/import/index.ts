export { type CardConflict, type FoldedChange, foldChanges, type ImportAsset, type ImportChange, type ImportChangeKind, type ImportFormat, type ImportMedia, type ImportReport, reportLines } from './import-report.ts';
export { type ImportOptions, type ImportResult, importWorld } from './import-world.ts';
export { Base64Error, decodeBase64, decodeBase64Utf8, encodeBase64, encodeBase64Utf8, isPng, pngReplaceText, pngWithoutText, pngWithText, PngTextError, readPngText, readPngTextBytes } from './png-text.ts';
export { uuidFromText } from './world-versions.ts';
export { IMPORT_MAX_DEPTH, tooDeepPath } from './nesting.ts';
export { CARD_EXTENSION, type CardExport, type CardWorldExtension, type CharacterCandidate, cardAsV2, cardPng, characterEntry, characterName, exportCard, type ExportOptions, isCharacterEntry } from './card-export.ts';
export type { CardSource } from './card-source.ts';
export { takeCardText } from './card-edits.ts';
export { applyCharacterSheet, type CharacterSheet, emptySheet, readCharacterSheet, type SheetLore, sheetCard } from './character-sheet.ts';
