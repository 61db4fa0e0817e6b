import { Link } from '../lib/router.tsx';
import { GeneratedCover } from './generated-cover.tsx';
import { count, excerpt } from '../lib/text.ts';

/** The widest a card's cover is drawn (css px): cards are at least 230 px and share 1120 px. */
export const COVER_CARD = { width: 360, ratio: 9 / 16 } as const;
/** A world page's cover: two fifths of 1120 px on a wide screen, the full width of a phone. */
export const COVER_HEAD = { width: 480, ratio: 10 / 16 } as const;

/** The URL of a world cover resized to `width` px (the server's widths: asset-routes.ts COVER_WIDTHS). */
export function coverVariant(url: string, width: number): string {
  return `${url}${url.includes('?') ? '&' : '?'}w=${width}`;
}

export interface WorldCardData {
  id: string;
  name: string;
  description: string;
  tags: string[];
  author: string | null;
  coverUrl: string | null;
  plays?: number;
}

/**
 * A world's cover. The box's shape comes from the stylesheet (aspect-ratio); width and height give
 * the browser the same ratio before any CSS or byte of the image arrives. The server sends a copy
 * resized to `width` (×2 for dense screens) instead of the uploaded original (asset-routes.ts,
 * `?w=`). Covers below the first screen load lazily; `eager` ones (the first row, the world page's
 * cover) load at once, as the likely largest paint. A world without a cover gets one drawn from its
 * id (`seed`; else its name) in the same box (issue 30 B): an inline SVG, no request to size or defer.
 */
export function Cover({
  url,
  name,
  className = 'cover',
  width = COVER_CARD.width,
  ratio = COVER_CARD.ratio,
  eager = false,
  seed,
}: {
  url: string | null;
  name: string;
  className?: string;
  width?: number;
  /** Height over width, as the stylesheet's aspect-ratio draws the box. */
  ratio?: number;
  eager?: boolean;
  /** What a drawn cover is drawn from: the world's id. */
  seed?: string;
}) {
  if (url) {
    const height = Math.round(width * ratio);
    return (
      <img
        className={className}
        src={coverVariant(url, width)}
        srcSet={`${coverVariant(url, width)} 1x, ${coverVariant(url, width * 2)} 2x`}
        width={width}
        height={height}
        alt={`Cover of ${name}`}
        loading={eager ? 'eager' : 'lazy'}
        decoding="async"
        fetchPriority={eager ? 'high' : undefined}
      />
    );
  }
  return <GeneratedCover seed={seed ?? name} name={name} className={className} />;
}

export function TagList({ tags, link = true }: { tags: string[]; link?: boolean }) {
  if (!tags.length) return null;
  return (
    <ul className="tags" aria-label="Tags">
      {tags.slice(0, 8).map((t) => (
        <li key={t}>
          {link ? (
            <Link className="tag" to={`/library?tag=${encodeURIComponent(t)}`}>
              #{t}
            </Link>
          ) : (
            <span className="tag">#{t}</span>
          )}
        </li>
      ))}
    </ul>
  );
}

/** A library card: cover, name (to the world page), author, tags, a line of description. */
export function WorldCard({ world, eager = false }: { world: WorldCardData; eager?: boolean }) {
  return (
    <li className="world-card" data-testid="world-card" data-world-id={world.id}>
      <Cover url={world.coverUrl} name={world.name} eager={eager} seed={world.id} />
      <div className="body">
        <h3>
          <Link to={`/worlds/${encodeURIComponent(world.id)}`}>{world.name}</Link>
        </h3>
        <span className="hint">
          by {world.author ?? 'unknown'}
          {world.plays ? ` · ${count(world.plays, 'player')}` : ''}
        </span>
        <p>{excerpt(world.description, 140)}</p>
        <TagList tags={world.tags} />
      </div>
    </li>
  );
}

/** Cards in a grid; the first `eager` covers (the first row on the first screen) load at once, the rest when scrolled near. */
export function CardGrid({ worlds, label, eager = 0 }: { worlds: WorldCardData[]; label: string; eager?: number }) {
  return (
    <ul className="cards" aria-label={label}>
      {worlds.map((w, i) => (
        <WorldCard key={w.id} world={w} eager={i < eager} />
      ))}
    </ul>
  );
}
