/**
 * The utility stylesheet for a world's interface: Tailwind's own compiler, run in the parent over
 * the class-name candidates found in the world's source, so utility classes (including arbitrary
 * values such as max-w-[75%]) work inside the frame without any script there.
 */
import preflightCss from 'tailwindcss/preflight.css?raw';
import themeCss from 'tailwindcss/theme.css?raw';
import utilitiesCss from 'tailwindcss/utilities.css?raw';

const SHEETS: Record<string, string> = { theme: themeCss, preflight: preflightCss, utilities: utilitiesCss };
const INPUT = '@import "tailwindcss/theme.css" layer(theme); @import "tailwindcss/preflight.css" layer(base); @import "tailwindcss/utilities.css" layer(utilities);';

type Compiler = { build(candidates: string[]): string };
let compiler: Promise<Compiler> | null = null;

function load(): Promise<Compiler> {
  compiler ??= import('tailwindcss').then(({ compile }) =>
    compile(INPUT, {
      base: '/',
      loadStylesheet: async (id: string) => {
        const key = Object.keys(SHEETS).find((name) => id.includes(name));
        if (!key) throw new Error(`Unknown stylesheet ${id}`);
        return { path: id, base: '/', content: SHEETS[key]! };
      },
    }),
  );
  return compiler;
}

export async function utilityCss(candidates: string[]): Promise<string> {
  return (await load()).build(candidates);
}
