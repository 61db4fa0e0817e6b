import { COLUMNS, concealed, type Lawn, PLANTS, ROWS, ZOMBIE_NAMES } from './lawn.ts';
import { MowerSprite, PeaSprite, PlantSprite, ZombieSprite } from './sprites.tsx';

/**
 * The lawn as the player sees it: five rows of nine cells (buttons, for planting and digging),
 * plants, zombies and peas drawn as SVG sprites at their positions, fog hiding the right side.
 */
export function LawnView({ lawn, onCell }: { lawn: Lawn; onCell(row: number, column: number): void }) {
  return (
    <section className="lawn" aria-label="Lawn" style={{ ['--columns' as string]: COLUMNS }}>
      {Array.from({ length: ROWS }, (_, row) => (
        // Rows and cells are fixed positions, so their index is their identity.
        <div className="lawn-row" key={row} data-row={row}>
          <span className="mower">
            <MowerSprite ready={lawn.mowers[row] ?? false} />
          </span>
          <div className="lawn-cells">
            {Array.from({ length: COLUMNS }, (_, column) => {
              const plant = lawn.plants.find((p) => p.row === row && p.column === column);
              const hidden = concealed(lawn, column);
              return (
                <button
                  key={column}
                  type="button"
                  className={`cell${hidden ? ' fog' : ''}`}
                  aria-label={`Row ${row + 1}, column ${column + 1}${plant ? `: ${PLANTS[plant.kind].name}` : ''}`}
                  onClick={() => onCell(row, column)}
                >
                  {plant && <PlantSprite kind={plant.kind} damage={1 - plant.hp / PLANTS[plant.kind].hp} />}
                </button>
              );
            })}
            {lawn.peas
              .filter((p) => p.row === row && p.x < COLUMNS && !concealed(lawn, Math.floor(p.x)))
              .map((p, i) => (
                <span key={`pea-${i}`} className="pea" style={{ left: `calc(${p.x} * var(--cell))` }}>
                  <PeaSprite />
                </span>
              ))}
            {lawn.zombies
              .filter((z) => z.row === row && z.x < COLUMNS + 0.5 && !concealed(lawn, Math.floor(z.x)))
              .map((z) => (
                <span key={z.id} className="zombie" title={ZOMBIE_NAMES[z.kind]} style={{ left: `calc(${Math.max(-0.4, z.x - 0.3)} * var(--cell))` }}>
                  <ZombieSprite kind={z.kind} name={ZOMBIE_NAMES[z.kind] ?? 'Zombie'} />
                </span>
              ))}
          </div>
        </div>
      ))}
    </section>
  );
}
