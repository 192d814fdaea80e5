#!/bin/sh
# CLI contract tests for bin/hitcurve-sim: JSON shape, formats, stdin, errors, exit codes.
BIN=${BIN:-../bin/hitcurve-sim}
T=${HITCURVE_TRACES_DIR:-../../shared/traces}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $1"; }
check() { if eval "$2"; then ok; else ko "$1"; fi; }
json() { python3 -c "import json,sys; d=json.load(open('$1')); $2"; }

# 1. csv on stdin: hand-worked LRU of size 2 over a b a c a b -> hits: a(3rd), a(5th) = 2 of 6
printf 'key,size\na,100\nb,200\na,100\nc,50\na,100\nb,200\n' > "$TMP/t.csv"
"$BIN" --policy lru,fifo --format csv --sizes 2 - < "$TMP/t.csv" > "$TMP/o.json"
check "csv stdin runs" "[ \$? -eq 0 ]"
check "lru hits 2/6" "json $TMP/o.json 'r=d[\"results\"][0]; assert r[\"policy\"]==\"lru\" and r[\"size\"]==2 and r[\"requests\"]==6 and abs(r[\"hit_ratio\"]-2/6)<1e-9'"
check "fifo hits 1/6" "json $TMP/o.json 'r=d[\"results\"][1]; assert r[\"policy\"]==\"fifo\" and abs(r[\"hit_ratio\"]-1/6)<1e-9'"
check "byte hit ratio uses csv sizes" "json $TMP/o.json 'r=d[\"results\"][0]; assert abs(r[\"byte_hit_ratio\"]-200/750)<1e-9'"
check "required fields" "json $TMP/o.json 'r=d[\"results\"][0]; assert all(k in r for k in (\"policy\",\"size\",\"hit_ratio\",\"byte_hit_ratio\",\"requests\",\"seconds\"))'"

# 2. costs from a file: misses a,b,c,b(after eviction?) -> LRU size 2: a m, b m, a h, c m (evict b), a h, b m
printf '1\n2\n1\n3\n1\n2\n' > "$TMP/c.txt"
"$BIN" --policy lru --format csv --sizes 2 --cost-file "$TMP/c.txt" "$TMP/t.csv" > "$TMP/o2.json"
check "cost total 1+2+3+2" "json $TMP/o2.json 'assert d[\"results\"][0][\"miss_cost_total\"]==8'"
printf '1\n2\n' > "$TMP/short.txt"
"$BIN" --policy lru --format csv --sizes 2 --cost-file "$TMP/short.txt" "$TMP/t.csv" > /dev/null 2>"$TMP/err"
check "short cost file rejected" "[ \$? -eq 1 ] && grep -q 'costs for 6 requests' $TMP/err"

# 3. real trace, bytes unit and suffixes, exact-lru
"$BIN" --policy lru --format arc --sizes 1000,2000 --exact-lru "$T/arc-OLTP.lis.zst" > "$TMP/o3.json"
check "arc-OLTP LRU == exact and README" "json $TMP/o3.json 'r=d[\"results\"]; assert r[0][\"hit_ratio\"]==r[2][\"hit_ratio\"] and abs(r[0][\"hit_ratio\"]-0.3283)<5e-5 and r[3][\"policy\"]==\"exact-lru\"'"
"$BIN" --policy lru --format arc --unit bytes --object-size 1KiB --sizes 1000KiB --max-requests 100000 "$T/arc-OLTP.lis.zst" > "$TMP/o4.json"
"$BIN" --policy lru --format arc --sizes 1000 --max-requests 100000 "$T/arc-OLTP.lis.zst" > "$TMP/o5.json"
check "bytes 1000 KiB of 1 KiB objects == 1000 items" "python3 -c \"import json; a=json.load(open('$TMP/o4.json'))['results'][0]; b=json.load(open('$TMP/o5.json'))['results'][0]; assert a['hits']==b['hits'] and a['size']==1024000 and a['unit']=='bytes'\""
"$BIN" --policy all --format lirs --sizes 100 --sample-rate 0.5 "$T/lirs-cpp.trace.gz" > "$TMP/o6.json"
check "all policies, mini-sim fields" "json $TMP/o6.json 'r=d[\"results\"]; assert len(r)==21 and all(x[\"simulated_size\"]==50 and x[\"sample_rate\"]==0.5 for x in r)'"

# 4. errors and exit codes
"$BIN" --policy nosuch --format csv --sizes 2 "$TMP/t.csv" > /dev/null 2>"$TMP/err"
check "unknown policy -> exit 2" "[ \$? -eq 2 ] && grep -q 'unknown policy' $TMP/err"
"$BIN" --policy lru --format csv --sizes 0 "$TMP/t.csv" > /dev/null 2>&1
check "bad size -> exit 2" "[ \$? -eq 2 ]"
"$BIN" --policy lru --format csv --sizes 2 "$TMP/missing.csv" > /dev/null 2>"$TMP/err"
check "missing file -> exit 1 with reason" "[ \$? -eq 1 ] && [ -s $TMP/err ]"
"$BIN" --policy lru --format nosuch --sizes 2 "$TMP/t.csv" > /dev/null 2>&1
check "unknown format -> exit 1" "[ \$? -eq 1 ]"
"$BIN" --policy lru --format csv --sizes 2 --slab "$TMP/t.csv" > /dev/null 2>&1
check "--slab without bytes -> exit 2" "[ \$? -eq 2 ]"
"$BIN" --list-policies > "$TMP/l.txt"
check "list-policies" "[ \$(wc -l < $TMP/l.txt) -eq 21 ]"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
