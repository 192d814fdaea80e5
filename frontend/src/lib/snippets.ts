// Copyable request snippets for autoscalers, and the memcached address check of the install form
// (the install blocks themselves come from the API: GET /agent-install).

export const DEFAULT_MEMCACHED = "127.0.0.1:11211";

/** Sizing requests an autoscaler makes, with real ids when the organization has them. */
export function sizingCurl(
  baseUrl: string,
  token: string | null,
  ids: { clusterId?: string | null; serverId?: string | null } = {},
): string {
  const auth = `-H 'Authorization: Bearer ${token ?? "hct_…"}'`;
  const lines = [
    `curl -s ${auth} \\`,
    `  '${baseUrl}/api/v1/sizing/clusters/${ids.clusterId ?? "<cluster id>"}/memory?target_hit_ratio=0.92'`,
  ];
  if (ids.serverId) {
    lines.push(`curl -s ${auth} \\`, `  '${baseUrl}/api/v1/sizing/servers/${ids.serverId}/memory?target_hit_ratio=0.92'`);
  }
  lines.push(`curl -s ${auth} '${baseUrl}/metrics'   # Prometheus`);
  return lines.join("\n");
}

/** host:port or a unix socket path, as the agent's --memcached accepts. */
export function validMemcachedAddress(s: string): boolean {
  const t = s.trim();
  if (t.startsWith("/")) return t.length > 1 && !/\s/.test(t);
  const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(t);
  return !!m && Number(m[2]) > 0 && Number(m[2]) < 65536;
}
