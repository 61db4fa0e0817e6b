import type { Reporter, TestModule, Vitest } from 'vitest/node';

/**
 * A skipped test fails the run: `npm test` runs every test, and the run starts the servers it needs
 * itself (./services.ts), so nothing is ever missing for a reason a skip could stand for. Runs
 * filtered by name (-t) are exempt, since the filter itself skips tests.
 */
export default class NoSkipsReporter implements Reporter {
  private filtered = false;

  onInit(vitest: Vitest): void {
    this.filtered = Boolean(vitest.config.testNamePattern);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (this.filtered) return;
    const skipped: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        if (test.result().state === 'skipped') skipped.push(`${module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`);
      }
    }
    if (skipped.length === 0) return;
    console.error(`\n${skipped.length} test(s) skipped; npm test runs every test:\n  ${skipped.slice(0, 20).join('\n  ')}`);
    process.exitCode = 1;
  }
}
