import { Link } from '../lib/router.tsx';
import { GeneratedCover } from './generated-cover.tsx';

export interface WorldCardData {
  id: string;
  name: string;
  description: string;
  tags: string[];
  author: string | null;
  coverUrl: string | null;
  plays?: number;
}

/** A world's cover, or one drawn from its id (`seed`; else its name) when it has none. */
export function Cover({ url, name, className = 'cover', seed }: { url: string | null; name: string; className?: string; seed?: string }) {
  if (url) return <img className={className} src={url} alt={`Cover of ${name}`} loading="lazy" />;
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
export function WorldCard({ world }: { world: WorldCardData }) {
  return (
    <li className="world-card" data-testid="world-card" data-world-id={world.id}>
      <Cover url={world.coverUrl} name={world.name} seed={world.id} />
      <div className="body">
        <h3>
          <Link to={`/worlds/${encodeURIComponent(world.id)}`}>{world.name}</Link>
        </h3>
        <span className="hint">
          by {world.author ?? 'unknown'}
          {world.plays ? ` · ${world.plays} ${world.plays === 1 ? 'player' : 'players'}` : ''}
        </span>
        <p>{world.description.slice(0, 140)}</p>
        <TagList tags={world.tags} />
      </div>
    </li>
  );
}

export function CardGrid({ worlds, label }: { worlds: WorldCardData[]; label: string }) {
  return (
    <ul className="cards" aria-label={label}>
      {worlds.map((w) => (
        <WorldCard key={w.id} world={w} />
      ))}
    </ul>
  );
}
