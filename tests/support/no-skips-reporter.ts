import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { servicesRequired } from './required.js';

/**
 * When the real services are required (CI, DATABASE_URL or REDIS_URL set), a skipped test is a
 * failure: "the integration tests run against the real servers and none is skipped". Runs filtered
 * by name (-t) are exempt, since the filter itself skips tests.
 */
export default class NoSkipsReporter implements Reporter {
  private filtered = false;

  onInit(vitest: Vitest): void {
    this.filtered = Boolean(vitest.config.testNamePattern);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (!servicesRequired || this.filtered) return;
    const skipped: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        if (test.result().state === 'skipped') skipped.push(`${module.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}`);
      }
    }
    if (skipped.length === 0) return;
    console.error(`\n${skipped.length} test(s) skipped while the real services are required:\n  ${skipped.slice(0, 20).join('\n  ')}`);
    process.exitCode = 1;
  }
}
