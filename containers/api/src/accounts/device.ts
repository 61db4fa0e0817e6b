/**
 * A login's device as a person recognises it, from its User-Agent: "Firefox on Windows",
 * "Safari on iPhone". Only the browser family and the system; versions and build strings are noise
 * here. Anything else: "Unknown browser" / "unknown system".
 */
const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bCriOS\/|\bChrome\/|\bChromium\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];
const SYSTEMS: [RegExp, string][] = [
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

export function describeDevice(userAgent: string | null | undefined): string {
  if (!userAgent) return 'Unknown device';
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1] ?? (/HeadlessChrome/.test(userAgent) ? 'Chrome' : null);
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1] ?? null;
  if (!browser && !system) return 'Unknown device';
  return `${browser ?? 'Unknown browser'} on ${system ?? 'unknown system'}`;
}
