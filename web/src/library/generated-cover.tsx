/**
 * A cover for a world without one (issue 30 B): an SVG drawn in the page from the world's id, so
 * it costs no image request, is the same on every visit and every screen, and differs from its
 * neighbours: two hues, a light, a motif and where the motif sits all come from the id's hash.
 */

/** FNV-1a, 32 bits: a cheap, stable hash of a string. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A small deterministic stream of numbers in [0, 1) from a seed (mulberry32). */
function stream(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const MOTIFS = ['rings', 'waves', 'hills', 'orbs', 'stripes', 'grid'] as const;
export type Motif = (typeof MOTIFS)[number];

export interface CoverArt {
  /** Background gradient from, to (hues in degrees). */
  hues: [number, number];
  motif: Motif;
  /** Where the motif centres, in the 160 × 90 box. */
  focus: [number, number];
  /** Further numbers the motif draws with (sizes, counts, phases), each in [0, 1). */
  shape: number[];
}

/** The drawing of a seed (a world's id): everything from its hash, nothing random at run time. */
export function coverArt(seed: string): CoverArt {
  const next = stream(hash(seed));
  const base = Math.floor(next() * 360);
  const turn = 40 + Math.floor(next() * 100);
  next();
  // The motif from a hash of its own, so that it does not follow the hue.
  const motif = MOTIFS[hash(`${seed}#m`) % MOTIFS.length]!;
  const focus: [number, number] = [Math.round(20 + next() * 120), Math.round(15 + next() * 60)];
  return { hues: [base, (base + turn) % 360], motif, focus, shape: Array.from({ length: 8 }, next) };
}

const W = 160;
const H = 90;
const round = (n: number) => Math.round(n * 10) / 10;

function Motif({ art }: { art: CoverArt }) {
  const [fx, fy] = art.focus;
  const s = art.shape;
  const ink = 'rgb(255 255 255 / 0.22)';
  const deep = 'rgb(0 0 0 / 0.16)';
  switch (art.motif) {
    case 'rings':
      return (
        <g fill="none" stroke={ink} strokeWidth={2 + s[0]! * 3}>
          {Array.from({ length: 6 }, (_, i) => (
            <circle key={i} cx={fx} cy={fy} r={round(10 + i * (10 + s[1]! * 10))} />
          ))}
        </g>
      );
    case 'waves': {
      const rows = 4 + Math.floor(s[0]! * 4);
      return (
        <g fill="none" stroke={ink} strokeWidth={2.5}>
          {Array.from({ length: rows }, (_, i) => {
            const y = ((i + 0.5) * H) / rows;
            const amp = 4 + s[1]! * 8;
            const phase = s[2]! * W;
            const at = (x: number) => round(y + amp * Math.sin((x + phase + i * 17) / (12 + s[3]! * 10)));
            let d = `M-10 ${at(-10)}`;
            for (let x = 0; x <= W + 10; x += 10) d += ` L${x} ${at(x)}`;
            return <path key={i} d={d} />;
          })}
        </g>
      );
    }
    case 'hills':
      return (
        <g>
          {[0, 1, 2].map((layer) => {
            const top = 40 + layer * 15;
            let d = `M0 ${H} L0 ${top}`;
            for (let x = 0; x <= W; x += 8) d += ` L${x} ${round(top - (10 + s[layer]! * 14) * Math.abs(Math.sin((x + s[layer + 3]! * 200) / (18 + layer * 7))))}`;
            return <path key={layer} d={`${d} L${W} ${H} Z`} fill={layer === 2 ? deep : ink} />;
          })}
          <circle cx={fx} cy={Math.min(fy, 30)} r={6 + s[6]! * 6} fill="rgb(255 255 255 / 0.45)" />
        </g>
      );
    case 'orbs':
      return (
        <g>
          {Array.from({ length: 5 }, (_, i) => (
            <circle key={i} cx={round((fx + i * 37 * (0.5 + s[i]!)) % W)} cy={round((fy + i * 23 * (0.5 + s[7 - i]!)) % H)} r={round(8 + s[(i + 2) % 8]! * 22)} fill={i % 2 ? ink : deep} />
          ))}
        </g>
      );
    case 'stripes': {
      const gap = 10 + s[0]! * 10;
      const angle = Math.round(-60 + s[1]! * 120);
      return (
        <g transform={`rotate(${angle} ${W / 2} ${H / 2})`} fill={ink}>
          {Array.from({ length: 16 }, (_, i) => (
            <rect key={i} x={round(-80 + i * gap * 1.6)} y={-60} width={round(gap * (0.3 + s[(i % 6) + 2]! * 0.5))} height={H + 120} />
          ))}
        </g>
      );
    }
    default: {
      const step = 12 + Math.floor(s[0]! * 8);
      const dots = [];
      for (let x = step / 2; x < W; x += step)
        for (let y = step / 2; y < H; y += step) {
          const d = Math.hypot(x - fx, y - fy);
          dots.push(<circle key={`${x}-${y}`} cx={round(x)} cy={round(y)} r={round(Math.max(0.8, 5 - d / (14 + s[1]! * 10)))} />);
        }
      return <g fill={ink}>{dots}</g>;
    }
  }
}

/** The generated cover, in the box the stylesheet gives `className` (the card's 16:9, the world page's 16:10). */
export function GeneratedCover({ seed, name, className = 'cover' }: { seed: string; name: string; className?: string }) {
  const art = coverArt(seed);
  const id = `cover-${hash(seed).toString(36)}`;
  return (
    <div className={`${className} generated-cover`} role="img" aria-label={`${name} (no cover)`} data-motif={art.motif} data-hues={art.hues.join(',')}>
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="xMidYMid slice" aria-hidden="true" focusable="false">
        <defs>
          <linearGradient id={id} x1="0" y1="0" x2="1" y2="1">
            <stop offset="0" stopColor={`hsl(${art.hues[0]} 62% 46%)`} />
            <stop offset="1" stopColor={`hsl(${art.hues[1]} 68% 34%)`} />
          </linearGradient>
        </defs>
        <rect width={W} height={H} fill={`url(#${id})`} />
        <Motif art={art} />
      </svg>
    </div>
  );
}
