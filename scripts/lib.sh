# Shared helpers for the project's scripts. Source it; do not run it.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="${HITCURVE_RUN_DIR:-$ROOT/.run}"
VENV="$ROOT/.venv"

say()  { printf '\033[1m[hitcurve]\033[0m %s\n' "$*" >&2; }
die()  { printf '\033[31m[hitcurve] error:\033[0m %s\n' "$*" >&2; exit 1; }

# Run a command as root: directly when we are root, else through sudo.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Print a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
    python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

# True when something accepts connections on 127.0.0.1:$1.
port_open() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

sha_of() { { cat "$@" 2>/dev/null || true; } | sha256sum | cut -c1-16; }
