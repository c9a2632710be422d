# Hearth in a container (docs/deploying.md):
#   docker build -t hearth .
#   docker run -d --name hearth -p 127.0.0.1:9000:9000 -v hearth-data:/data hearth
#
# CI has no Docker engine: scripts/docker-steps.sh carries out this file on the CI
# machine instead, instruction by instruction (the build stage's RUN lines as written,
# the run stage's in a debootstrapped Debian root), then runs the result as this image
# would. An instruction or form it does not know fails CI: extend the script with it.

# ---- build: the official Swift toolchain image, the same Swift as CI's (6.3.1) ----
FROM swift:6.3.1-bookworm AS build
# libsqlite3-dev is already in the image; libssl-dev (libcrypto's headers) and libpq-dev
# (PostgreSQL's client, for the PostgreSQL engine) are not.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-dev libssl-dev libpq-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so this layer stays cached while only the sources change.
COPY Package.swift ./
RUN swift package resolve
COPY . .
# The Swift runtime and Foundation linked in: the run stage needs no Swift libraries.
RUN swift build -c release --static-swift-stdlib --product hearth
# Everything the run stage gets, laid out as it will sit under / there: the server, the
# Swift crash backtracer for static binaries (a crash prints a symbolicated backtrace to
# the log), the health check and the default rules (the repository's rules.json).
RUN install -D -m 0755 "$(swift build -c release --static-swift-stdlib --product hearth --show-bin-path)/hearth" /staging/usr/local/bin/hearth \
 && install -D -m 0755 /usr/libexec/swift/linux/swift-backtrace-static /staging/usr/local/libexec/hearth/swift-backtrace-static \
 && install -D -m 0755 scripts/docker-healthcheck.sh /staging/usr/local/bin/hearth-healthcheck \
 && install -D -m 0644 rules.json /staging/etc/hearth/rules.json

# ---- run: Debian slim plus the C libraries Hearth links (sqlite3, libcrypto, libssl, libpq) ----
# Exactly the runtime packages of docs/deploying.md's table (scripts/check-runtime-packages.sh
# fails when the two differ).
FROM debian:bookworm-slim
# libssl3 carries libcrypto.so.3 and libssl.so.3. ca-certificates: the authorities that
# verify an smtp+starttls:// mail server (the only outgoing TLS Hearth makes).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-0 libssl3 libpq5 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# A fixed, unprivileged uid/gid (10001), so a bind-mounted data directory can be chowned
# to it on the host: `chown -R 10001:10001 /srv/hearth-data`. A named volume is created
# from the image's /data, which already belongs to it.
RUN groupadd --gid 10001 hearth \
 && useradd --uid 10001 --gid hearth --home-dir /data --no-create-home --shell /usr/sbin/nologin hearth \
 && mkdir -p /data && chown hearth:hearth /data && chmod 0700 /data
COPY --from=build /staging/ /

# Defaults as environment variables rather than flags: a flag beats its variable, so
# flags here could not be changed with `docker run -e`. Both ways stay open: `-e
# HEARTH_LOG_LEVEL=debug`, or flags after the image name (`docker run ... hearth
# --no-email-sign-up`), which are appended to `hearth serve`.
# 0.0.0.0: inside its own network namespace the container's loopback is unreachable from
# the host, so Hearth must listen on the container's interface; what the world sees is
# decided by `-p` (publish to 127.0.0.1 and put nginx in front, as above).
# No HEARTH_TRUSTED_PROXIES default: nginx's connections arrive from the Docker network's
# gateway (172.17.0.1 on the default bridge), which depends on the host. Set it with -e
# to believe nginx's X-Forwarded-For (docs/deploying.md, "Trusted proxies").
ENV HEARTH_HOST=0.0.0.0 \
    HEARTH_PORT=9000 \
    HEARTH_DATA_DIR=/data \
    HEARTH_RULES=/etc/hearth/rules.json \
    SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/usr/local/libexec/hearth/swift-backtrace-static
USER hearth:hearth
WORKDIR /data
VOLUME /data
EXPOSE 9000
# GET /healthz over loopback; it reads HEARTH_PORT, so change the port with -e, not --port.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["hearth-healthcheck"]
# SIGTERM (docker stop) drains for up to 10 s and exits 0: give `docker stop` -t 20 (its
# default 10 s could cut the drain short). SIGHUP (docker kill -s HUP) reloads the rules.
STOPSIGNAL SIGTERM
ENTRYPOINT ["hearth", "serve"]
