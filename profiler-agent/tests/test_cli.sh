#!/usr/bin/env bash
# CLI tests of hitcurve-agent: --version, replay's stable interface and its errors.
set -u
BIN="${1:-../bin/hitcurve-agent}"
TR="${HITCURVE_TRACES_DIR:-../../shared/traces}"
pass=0; fail=0
ok() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1" >&2; fi; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

ok "--version prints a version" '"$BIN" --version | grep -Eq "^hitcurve-agent [0-9]+\.[0-9]+\.[0-9]+$"'
ok "--help exits 0" '"$BIN" --help >/dev/null'
ok "unknown command exits 2" '"$BIN" frobnicate 2>/dev/null; [ $? -eq 2 ]'
ok "run --check-config prints the parsed flags" '"$BIN" run --memcached m:11211 --backend-url http://b:8000 --agent-key-file /k --interval 30 --check-config | grep -qx "interval = 30"'
ok "run --check-config prints a double as written" '"$BIN" run --memcached m:11211 --backend-url http://b:8000 --agent-key-file /k --loss-threshold 0.05 --check-config | grep -qx "loss-threshold = 0.05"'
ok "run --check-config prints a double that parses back" '"$BIN" run --memcached m:11211 --backend-url http://b:8000 --agent-key-file /k --loss-threshold 0.123456789012 --check-config | grep -qx "loss-threshold = 0.123456789012"'
ok "run --check-config rejects an unknown flag" '"$BIN" run --backend http://b --check-config 2>/dev/null; [ $? -eq 2 ]'
printf 'memcached = 10.0.0.1:11211\nghost-factor = 99\n' > "$TMP/bad.conf"
ok "run --check-config rejects an out-of-range config value" '"$BIN" run --config "$TMP/bad.conf" --check-config 2>&1 | grep -q "ghost-factor must be a number in \[1, 16\]"'
ok "replay without args exits 2" '"$BIN" replay 2>/dev/null; [ $? -eq 2 ]'
ok "bad --unit rejected" '"$BIN" replay --format csv --cache-size 5 --unit kg - </dev/null 2>/dev/null; [ $? -eq 2 ]'
ok "both sampling modes rejected" '"$BIN" replay --format csv --cache-size 5 --sample-keys 100 --sample-rate 0.5 - </dev/null 2>/dev/null; [ $? -eq 2 ]'
ok "missing file is an error" '! "$BIN" replay --format lirs --cache-size 5 "$TMP/nope" 2>/dev/null'

# csv from stdin, gzip-compressed: a loop of 10 keys, cache 5 -> LRU never hits below 10
for r in 1 2 3 4 5; do for k in 0 1 2 3 4 5 6 7 8 9; do echo "k$k,100"; done; done | gzip > "$TMP/loop.csv.gz"
"$BIN" replay --format csv --cache-size 5 - < "$TMP/loop.csv.gz" > "$TMP/loop.json"
ok "csv replay json" 'python3 - "$TMP/loop.json" <<PY
import json,sys
o=json.load(open(sys.argv[1]))
assert o["unit"]=="items" and o["current_size"]==5, o
p=o["points"]; assert len(p)>=100, len(p)
assert abs(p[-1][0]-10)<1e-9 and p[0][0]>0, (p[0],p[-1])
below=[y for x,y in p if x<10-1e-9 and abs(x-round(x))<1e-9]; assert len(below)==9 and max(below)<0.01, max(below)  # integer sizes 1..9 never hit a loop of 10
assert abs(p[-1][1]-0.8)<0.01, p[-1]       # 40 of 50 reads hit at size 10
PY'
ok "--csv output" '"$BIN" replay --format csv --cache-size 5 --csv - < "$TMP/loop.csv.gz" | head -1 | grep -q "^size,hit_ratio$"'
ok "--unit bytes scales sizes" '"$BIN" replay --format csv --cache-size 500 --unit bytes - < "$TMP/loop.csv.gz" | python3 -c "import json,sys; o=json.load(sys.stdin); assert o[\"unit\"]==\"bytes\" and o[\"current_items\"]==5 and abs(o[\"points\"][-1][0]-1000)<1e-6, o[\"points\"][-1]"'
ok "--ghost-factor 4 spans 4N" '"$BIN" replay --format csv --cache-size 5 --ghost-factor 4 - < "$TMP/loop.csv.gz" | python3 -c "import json,sys; o=json.load(sys.stdin); assert abs(o[\"points\"][-1][0]-20)<1e-6"'

ok "bad --estimator rejected" '"$BIN" replay --format csv --cache-size 5 --estimator lru - </dev/null 2>&1 | grep -q "estimator must be rounder or stacker"'
ok "replay says which estimator (default rounder)" '"$BIN" replay --format csv --cache-size 5 - < "$TMP/loop.csv.gz" | python3 -c "import json,sys; assert json.load(sys.stdin)[\"profile\"][\"estimator\"]==\"rounder\""'
# stacker is exact below N: a loop of 10 keys hits at size 10 only, nothing at 9.9 or below
ok "--estimator stacker: exact on a loop" '"$BIN" replay --format csv --cache-size 10 --ghost-factor 1 --points 1000 --estimator stacker - < "$TMP/loop.csv.gz" | python3 -c "
import json,sys; o=json.load(sys.stdin); assert o[\"profile\"][\"estimator\"]==\"stacker\"
p=o[\"points\"]; assert max(y for x,y in p if x<=9+1e-9)<1e-9 and abs(p[-1][1]-0.8)<1e-9, p[-15:]"'

if [ -f "$TR/arc-OLTP.lis.zst" ]; then
  "$BIN" replay --format arc --cache-size 1000 "$TR/arc-OLTP.lis.zst" > "$TMP/oltp1k.json"
  ok "arc-OLTP at N=1000 equals exact LRU 0.3283" 'python3 -c "import json,sys; o=json.load(open(sys.argv[1])); assert abs(o[\"hit_ratio_at_current\"]-0.3283)<0.00005, o[\"hit_ratio_at_current\"]" "$TMP/oltp1k.json"'
  "$BIN" replay --format arc --cache-size 1000 --ghost-factor 15 --points 150 "$TR/arc-OLTP.lis.zst" > "$TMP/oltp.json"
  ok "arc-OLTP matches exact LRU at N and the ghost stays close beyond" 'python3 - "$TMP/oltp.json" <<PY
import json,sys
o=json.load(open(sys.argv[1]))
assert o["requests"]==914145, o["requests"]
assert abs(o["hit_ratio_at_current"]-0.3283)<0.0005, o["hit_ratio_at_current"]  # N between grid points at k=15
pts={round(x):y for x,y in o["points"]}
for size,ref in ((2000,.4247),(5000,.5365),(10000,.6070),(15000,.6463)):
    assert abs(pts[size]-ref)<0.02, (size,pts[size],ref)
PY'
  ok "arc-OLTP --estimator stacker at N=1000 equals exact LRU 0.3283" '"$BIN" replay --format arc --cache-size 1000 --estimator stacker "$TR/arc-OLTP.lis.zst" | python3 -c "import json,sys; o=json.load(sys.stdin); assert abs(o[\"hit_ratio_at_current\"]-0.3283)<0.00005 and o[\"profile\"][\"estimator\"]==\"stacker\", o[\"hit_ratio_at_current\"]"'
  ok "sampled replay bounded" '"$BIN" replay --format arc --cache-size 18688 --sample-keys 4096 "$TR/arc-OLTP.lis.zst" | python3 -c "import json,sys; o=json.load(sys.stdin); assert o[\"profile\"][\"tracked_keys\"]<=4096 and o[\"profile\"][\"sample_rate\"]<0.2"'
else
  echo "SKIP arc-OLTP checks: no traces at $TR"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
