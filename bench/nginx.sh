# Sourced by the HTTP benchmarks: a scratch nginx on 127.0.0.1 serving an 800-byte page from a
# temporary directory, stopped (by its own PID file) and removed on every exit path.
#   start_nginx FIRST_PORT   (PORT, when set, is used as is)
# sets T (the directory, for the caller's files too), PORT, URL and NGINX.

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

nginx_cleanup() {
    if [ -s "$T/nginx.pid" ]; then
        kill -QUIT "$(cat "$T/nginx.pid")" 2>/dev/null || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "$T/nginx.pid" ] || break; sleep 0.2; done
    fi
    rm -rf "$T"
}

start_nginx() {
    NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
    T="$(mktemp -d /tmp/perflab-bench.XXXXXX)"
    chmod 755 "$T"   # nginx's workers run as an unprivileged user
    trap nginx_cleanup EXIT
    trap 'exit 130' INT TERM
    if [ -z "$PORT" ]; then
        PORT=$1
        while ! port_free "$PORT"; do PORT=$((PORT + 1)); done
    fi
    mkdir -p "$T/www" "$T/tmp"
    head -c 800 /dev/zero | tr '\0' 'x' >"$T/www/index.html"
    chmod 644 "$T/www/index.html"
    cat >"$T/nginx.conf" <<CONF
worker_processes 2;
pid $T/nginx.pid;
error_log $T/error.log;
events { worker_connections 8192; }
http {
    access_log off;
    sendfile on; tcp_nopush on; tcp_nodelay on;
    keepalive_requests 100000000;
    keepalive_timeout 120s;
    client_body_temp_path $T/tmp; proxy_temp_path $T/tmp; fastcgi_temp_path $T/tmp;
    uwsgi_temp_path $T/tmp; scgi_temp_path $T/tmp;
    server { listen 127.0.0.1:$PORT reuseport; root $T/www; }
}
CONF
    "$NGINX" -p "$T" -c "$T/nginx.conf" -g 'daemon on;'
    URL="http://127.0.0.1:$PORT/index.html"
    for _ in $(seq 50); do port_free "$PORT" || break; sleep 0.1; done
}
