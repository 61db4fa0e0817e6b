/**
 * When the real services are required rather than optional: under CI, or whenever DATABASE_URL or
 * REDIS_URL is set (the README's "integration tests run against the real servers"). Then a missing
 * PostgreSQL, Redis or Chromium fails the run instead of skipping its suites.
 */
export const servicesRequired = Boolean(process.env.CI || process.env.DATABASE_URL || process.env.REDIS_URL);

export function requireOrSkip(what: string, detail: string): false {
  if (servicesRequired) {
    throw new Error(`${what} is required (CI, DATABASE_URL or REDIS_URL is set) but unavailable: ${detail}`);
  }
  console.warn(`[tests] ${what} unavailable; its integration suites are skipped: ${detail}`);
  return false;
}
