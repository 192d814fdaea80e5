// Copyable install and request snippets for the agent and for autoscalers. The agent reads
// `name = value` lines (profiler-agent/src/agent/config.c) and its key from a file; the Debian
// package (`make -C profiler-agent deb`) installs the binary, the systemd unit, the system user
// `hitcurve` and /etc/hitcurve/agent.conf.

export const KEY_PLACEHOLDER = "hca_…";
export const DEFAULT_MEMCACHED = "127.0.0.1:11211";

/** The agent's configuration file for a backend and a memcached address. */
export function agentConfig(backendUrl: string, memcached = DEFAULT_MEMCACHED): string {
  return [
    `memcached = ${memcached}`,
    `backend-url = ${backendUrl}`,
    "agent-key-file = /etc/hitcurve/agent.key",
    "spool-dir = /var/lib/hitcurve-agent/spool",
  ].join("\n");
}

/** One block to paste on the memcached host: install, configure, store the key, start. */
export function agentInstall(opts: { key: string | null; backendUrl: string; memcached: string }): string {
  const key = opts.key ?? `${KEY_PLACEHOLDER}  # create an agent key above: it appears here`;
  return [
    "# On the memcached host (Debian/Ubuntu), in a checkout of the Hitcurve repository:",
    "make -C profiler-agent deb && sudo dpkg -i profiler-agent/build/hitcurve-agent_*.deb",
    "sudo tee /etc/hitcurve/agent.conf >/dev/null <<'EOF'",
    agentConfig(opts.backendUrl, opts.memcached),
    "EOF",
    `echo '${key}' | sudo install -m 600 -o hitcurve -g hitcurve /dev/stdin /etc/hitcurve/agent.key`,
    "sudo systemctl enable --now hitcurve-agent   # logs: journalctl -u hitcurve-agent",
  ].join("\n");
}

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
