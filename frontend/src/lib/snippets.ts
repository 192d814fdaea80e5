// Copyable install and configuration snippets for the agent and for autoscalers. The agent reads
// `name = value` lines (profiler-agent/src/agent/config.c) and its key from a file.

export function agentConfig(backendUrl: string, memcached = "127.0.0.1:11211"): string {
  return [
    "# /etc/hitcurve-agent.conf",
    `memcached = ${memcached}`,
    `backend-url = ${backendUrl}`,
    "agent-key-file = /etc/hitcurve-agent.key",
    "spool-dir = /var/lib/hitcurve-agent/spool",
    "interval = 60",
    "trace-rate = 0.01",
  ].join("\n");
}

export function agentInstall(key: string | null): string {
  const k = key ?? "hca_…  # paste the key shown once when you created it";
  return [
    "# build the agent (Debian 12: gcc, make, libcurl4-openssl-dev, zlib1g-dev, libjansson-dev)",
    "make -C profiler-agent all && sudo install -m 755 bin/hitcurve-agent /usr/local/bin/",
    "# store the key where only the agent can read it",
    `sudo install -m 600 /dev/stdin /etc/hitcurve-agent.key <<< '${k}'`,
    "sudo mkdir -p /var/lib/hitcurve-agent/spool",
    "hitcurve-agent run --config /etc/hitcurve-agent.conf",
  ].join("\n");
}

export function sizingCurl(baseUrl: string, token: string | null): string {
  return [
    `curl -s -H 'Authorization: Bearer ${token ?? "hct_…"}' \\`,
    `  '${baseUrl}/api/v1/sizing/clusters/<cluster id>/memory?target_hit_ratio=0.92'`,
  ].join("\n");
}
