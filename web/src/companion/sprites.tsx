import type { PlantKind } from './lawn.ts';

/** The demo board's plants, zombies and mowers, drawn as small SVG sprites (40×40 view box). */

function Sunflower() {
  const petals = Array.from({ length: 10 }, (_, i) => {
    const a = (i / 10) * Math.PI * 2;
    return <ellipse key={i} cx={20 + Math.cos(a) * 9} cy={15 + Math.sin(a) * 9} rx={4.2} ry={2.6} transform={`rotate(${(a * 180) / Math.PI} ${20 + Math.cos(a) * 9} ${15 + Math.sin(a) * 9})`} fill="#ffd21f" stroke="#e0a800" strokeWidth={0.6} />;
  });
  return (
    <>
      <path d="M20 24 C19 30 21 33 20 39" stroke="#2f8a1f" strokeWidth={3} fill="none" />
      <ellipse cx={14} cy={33} rx={5} ry={2.4} fill="#3fa52a" transform="rotate(-25 14 33)" />
      <ellipse cx={26} cy={31} rx={5} ry={2.4} fill="#3fa52a" transform="rotate(25 26 31)" />
      {petals}
      <circle cx={20} cy={15} r={6.5} fill="#8a4b12" />
      <circle cx={17.8} cy={14} r={1} fill="#2a1604" />
      <circle cx={22.2} cy={14} r={1} fill="#2a1604" />
      <path d="M17.5 17.2 Q20 19.4 22.5 17.2" stroke="#2a1604" strokeWidth={0.9} fill="none" />
    </>
  );
}

function Peashooter() {
  return (
    <>
      <path d="M17 26 C16 31 18 35 17 39" stroke="#2f8a1f" strokeWidth={3} fill="none" />
      <ellipse cx={11} cy={35} rx={6} ry={2.6} fill="#3fa52a" transform="rotate(-15 11 35)" />
      <ellipse cx={23} cy={36} rx={6} ry={2.6} fill="#3fa52a" transform="rotate(15 23 36)" />
      <circle cx={16} cy={16} r={10} fill="#62c93f" stroke="#2f8a1f" strokeWidth={1.2} />
      <rect x={23} y={11.5} width={10} height={9} rx={3} fill="#62c93f" stroke="#2f8a1f" strokeWidth={1.2} />
      <ellipse cx={33} cy={16} rx={2} ry={4} fill="#1f5e12" />
      <circle cx={17} cy={12.5} r={2.2} fill="#fff" />
      <circle cx={17.6} cy={12.5} r={1.2} fill="#111" />
      <path d="M6.5 10 L3 7 M7 14 L3 13" stroke="#2f8a1f" strokeWidth={1.5} />
    </>
  );
}

function WallNut({ damage }: { damage: number }) {
  return (
    <>
      <ellipse cx={20} cy={22} rx={13} ry={16} fill="#c98a3d" stroke="#7a4a16" strokeWidth={1.3} />
      <ellipse cx={16} cy={15} rx={4} ry={2} fill="#dba463" opacity={0.7} />
      <circle cx={15} cy={20} r={2.6} fill="#fff" />
      <circle cx={25} cy={20} r={2.6} fill="#fff" />
      <circle cx={15.5} cy={20.5} r={1.3} fill="#111" />
      <circle cx={25.5} cy={20.5} r={1.3} fill="#111" />
      <path d="M16 29 Q20 27.5 24 29" stroke="#5a3408" strokeWidth={1.2} fill="none" />
      {damage > 0.4 && <path d="M11 10 L15 15 L12 18 L16 22" stroke="#5a3408" strokeWidth={1.2} fill="none" />}
      {damage > 0.7 && <path d="M29 12 L25 17 L29 21 L26 26" stroke="#5a3408" strokeWidth={1.2} fill="none" />}
    </>
  );
}

function CherryBomb() {
  return (
    <>
      <path d="M14 18 Q20 4 27 17" stroke="#2f8a1f" strokeWidth={2} fill="none" />
      <circle cx={13} cy={26} r={9} fill="#d8232a" stroke="#8a0f14" strokeWidth={1.2} />
      <circle cx={27} cy={25} r={9} fill="#e23a3f" stroke="#8a0f14" strokeWidth={1.2} />
      <circle cx={10} cy={23} r={2} fill="#fff" opacity={0.6} />
      <circle cx={24} cy={22} r={2} fill="#fff" opacity={0.6} />
    </>
  );
}

export function PlantSprite({ kind, damage = 0, size = 40 }: { kind: PlantKind; damage?: number; size?: number }) {
  return (
    <svg viewBox="0 0 40 40" width={size} height={size} role="img" aria-label={kind} data-sprite={kind}>
      {kind === 'sunflower' && <Sunflower />}
      {kind === 'peashooter' && <Peashooter />}
      {kind === 'wall-nut' && <WallNut damage={damage} />}
      {kind === 'cherry-bomb' && <CherryBomb />}
    </svg>
  );
}

export function ZombieSprite({ kind, name }: { kind: string; name: string }) {
  return (
    <svg viewBox="0 0 40 48" width={36} height={44} role="img" aria-label={name} data-sprite={kind}>
      {/* legs and coat */}
      <path d="M16 36 L14 47 M24 36 L26 47" stroke="#4a3b2a" strokeWidth={3} />
      <path d="M11 22 L29 22 L27 37 L13 37 Z" fill="#6b5233" stroke="#3d2d18" strokeWidth={1} />
      <path d="M19 22 L20 30 L21 22" fill="#b52222" />
      {/* arms reaching towards the house */}
      <path d="M12 25 L3 27 M13 29 L4 31" stroke="#8aa37a" strokeWidth={2.6} strokeLinecap="round" />
      {/* head */}
      <circle cx={18} cy={14} r={8} fill="#9fb98e" stroke="#5d7550" strokeWidth={1} />
      <circle cx={14.5} cy={13} r={2.3} fill="#fff" />
      <circle cx={14.2} cy={13.3} r={0.9} fill="#111" />
      <circle cx={20} cy={12.5} r={1.6} fill="#fff" />
      <path d="M12 18.5 L19 18.5" stroke="#3b2a1a" strokeWidth={1.2} />
      {kind === 'conehead-zombie' && <path d="M11 8 L18 -3 L25 8 Z" fill="#f28a1a" stroke="#a85607" strokeWidth={1} transform="translate(0 3)" />}
      {kind === 'buckethead-zombie' && <path d="M9 9 L11 1 L25 1 L27 9 Z" fill="#9aa0a6" stroke="#5b6066" strokeWidth={1} />}
      {kind === 'flag-zombie' && (
        <>
          <path d="M30 6 L30 36" stroke="#5b4630" strokeWidth={1.5} />
          <path d="M30 6 L39 8.5 L30 12 Z" fill="#c62828" />
        </>
      )}
    </svg>
  );
}

export function MowerSprite({ ready }: { ready: boolean }) {
  return (
    <svg viewBox="0 0 40 30" width={30} height={22} role="img" aria-label={ready ? 'Lawn mower' : 'Lawn mower used'} data-sprite="mower">
      {ready ? (
        <>
          <rect x={4} y={10} width={28} height={11} rx={3} fill="#d8312a" stroke="#7d130f" strokeWidth={1} />
          <path d="M8 10 L2 2" stroke="#444" strokeWidth={2} />
          <circle cx={11} cy={23} r={4} fill="#333" />
          <circle cx={27} cy={23} r={4} fill="#333" />
        </>
      ) : (
        <path d="M6 20 L34 20" stroke="#2c5a1c" strokeWidth={2} strokeDasharray="3 3" />
      )}
    </svg>
  );
}

export function PeaSprite() {
  return (
    <svg viewBox="0 0 10 10" width={10} height={10} aria-hidden="true">
      <circle cx={5} cy={5} r={4} fill="#7ee04f" stroke="#2f8a1f" strokeWidth={1} />
    </svg>
  );
}
