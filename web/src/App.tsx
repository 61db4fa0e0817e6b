import { useEffect, useState } from 'react';

interface Version {
  version: string;
  mode: string;
}

/** The application shell. Later issues mount the library, player, studio and settings here. */
export function App() {
  const [version, setVersion] = useState<Version | null>(null);
  useEffect(() => {
    fetch('/api/version')
      .then((r) => (r.ok ? (r.json() as Promise<Version>) : null))
      .then(setVersion)
      .catch(() => setVersion(null));
  }, []);
  return (
    <div className="shell">
      <header>
        <h1>Yumina</h1>
        <p>Interactive fiction worlds, driven by AI, turn by turn.</p>
      </header>
      <main>
        <section>
          <h2>Worlds</h2>
          <p>Play a world: a lorebook, variables, rules and its own interface, narrated by an AI model.</p>
        </section>
      </main>
      <footer data-testid="version">{version ? `v${version.version} · ${version.mode}` : 'connecting…'}</footer>
    </div>
  );
}
