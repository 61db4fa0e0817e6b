export { formatIssuePath, type PathSegment, parseIssuePath } from './issue-path.ts';
export {
  parseWorld,
  type ValidationIssue,
  type ValidationWarning,
  validateWorld,
  WorldValidationError,
  type WorldValidation,
} from './validate-world.ts';
export { checkWorldReferences, type RawFinding, type ReferenceFindings } from './world-references.ts';
export * from './world-schema.ts';
export { checkWorldVersion, type WorldVersionCheck, type WorldVersionStatus } from './world-version.ts';
export { worldJsonSchema } from './world-json-schema.ts';
export { lintWorld } from './world-lint.ts';
