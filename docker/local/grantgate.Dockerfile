# The gate as an image (docs/images.md, "The gate as an image"): grantgate,
# awg-mcp and refcore from binaries built on the host, with what a run needs
# beside them: PostgreSQL 15's server binaries (the process runtime's
# throw-away clusters), Chromium and chromedriver (`--browser chromium`).
# Built by scripts/build-images; run through scripts/gate-image.
ARG BASE=grantgate/debian:bookworm
# The packages are a stage of their own, built from nothing but the base:
# scripts/build-images builds it before cargo has made the binaries, so its
# download and unpacking overlap the compilation.
FROM ${BASE} AS packages

# Debian would create a "main" cluster on install; the gate makes its own.
# This first step is docker/postgres/Dockerfile's, character for character,
# so Docker's layer cache builds it once for both images.
RUN mkdir -p /etc/postgresql-common/createcluster.d \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/grantgate.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data \
 && install -d -o postgres -g postgres -m 2775 /var/run/postgresql
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium chromium-driver chromium-headless-shell \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10002 gate \
 && useradd --system --uid 10002 --gid gate --home-dir /home/gate --create-home gate \
 && install -d -o gate -g gate -m 0755 /gate /gate/reports

# grantgate finds awg-mcp and refcore next to itself.
FROM packages
COPY grantgate awg-mcp refcore /usr/local/bin/

LABEL org.opencontainers.image.title="grantgate" \
      org.opencontainers.image.description="The agent work grant acceptance gate, with awg-mcp, refcore, PostgreSQL 15 and Chromium" \
      org.opencontainers.image.licenses="Apache-2.0"

# PostgreSQL refuses to run as root, and the gate needs no privilege: the
# host's Docker socket, when a Core image is gated, is reached through its
# group (scripts/gate-image adds it).
USER gate
# A run's reports go to /gate/reports (`--report-dir` is relative).
WORKDIR /gate
ENTRYPOINT ["/usr/local/bin/grantgate"]
CMD ["--help"]
