import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order files start in: vitest's own (projects and groups in turn; within a project, what
 * failed last and then the longest by its cache of the last run's durations, or the largest files
 * when it has none, as on a fresh clone), except that the files known to take longest start first.
 * Two workers then end together: on a fresh clone vitest started the typecheck (a small file that
 * ran for 35-45 s with TypeScript 5) last, and one worker ran it alone while the other had nothing left.
 * Measured in a full run on the 2-core machine (`--reporter=json`); keep it to the slowest few.
 */
export const LONGEST_FIRST = [
  'tests/browser/companion.test.ts',
  'tests/drill.test.ts',
  'tests/browser/player-comforts.test.ts',
  'tests/foundation.test.ts',
  'tests/browser/partner.test.ts',
  'tests/browser/player.test.ts',
  'containers/api/src/companion/companion.test.ts',
  'tests/browser/accessibility.test.ts',
  'tests/browser/rooms.test.ts',
  'tests/browser/found-by-clicking.test.ts',
  'tests/browser/groups.test.ts',
  'tests/backup-restore.test.ts',
  'tests/health.test.ts',
  'tests/typecheck.test.ts',
];

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId === `${root}/${path}`);
      return index < 0 ? LONGEST_FIRST.length : index;
    };
    const group = (file: TestSpecification) => `${file.project.config.sequence.groupOrder}\u0000${file.project.name}`;
    const position = new Map(sorted.map((file, index) => [file, index]));
    // Within one project and group only; across them vitest's order stands.
    return [...sorted].sort((a, b) => (group(a) === group(b) ? rank(a) - rank(b) : 0) || position.get(a)! - position.get(b)!);
  }
}
