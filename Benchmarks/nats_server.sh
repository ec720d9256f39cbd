# Sourced by the worker benchmarks: a private nats-server (127.0.0.1, a random port, file
# storage under a temporary folder) mapping fix.* over $P partitions, the fix streams set up
# by `$F setup`. Sets dir, url and server; the server and the folder go when the script exits.
dir=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
cat > "$dir/server.conf" <<CONF
listen: 127.0.0.1:$port
max_payload: 1MB
jetstream { store_dir: "$dir/store", max_memory_store: 256MB, max_file_store: 8GB }
mappings = { "fix.*": "fix.{{partition($P,1)}}.{{wildcard(1)}}" }
CONF
nats-server -c "$dir/server.conf" > "$dir/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT
url=nats://127.0.0.1:$port
for _ in $(seq 50); do "$F" setup --nats "$url" --partitions "$P" > "$dir/setup.log" 2>&1 && break; sleep 0.2; done
