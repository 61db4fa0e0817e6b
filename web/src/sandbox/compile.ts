/** The interface compiler lives in @yumina/sandbox, shared with the studio assistant's server-side build check. */
export { classCandidates, CompileError, compileRootComponent, type RootComponentLike, scriptSafe } from '@yumina/sandbox/compile';
