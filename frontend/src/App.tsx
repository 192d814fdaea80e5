import { useEffect, useState } from "react";

type Health = { status: string; version: string; checks: Record<string, { ok: boolean; error?: string }> };

export function App() {
  const [health, setHealth] = useState<Health | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    fetch("/api/v1/health")
      .then((r) => r.json() as Promise<Health>)
      .then(setHealth)
      .catch((e: unknown) => setError(String(e)));
  }, []);
  return (
    <main>
      <h1>Hitcurve</h1>
      {error && <p role="alert">Cannot reach the service: {error}</p>}
      {health && (
        <p data-testid="health">
          Service {health.status} (v{health.version})
        </p>
      )}
    </main>
  );
}
