# refcore for machines that reach a registry:
#   docker build -f docker/refcore.Dockerfile -t grantgate/refcore .
# Without a registry, scripts/build-images builds the same runtime image
# from docker/local/refcore.Dockerfile; keep the two runtime parts in step.
ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p refcore \
 && install -D -s target/release/refcore /out/refcore

FROM debian:bookworm-slim
RUN groupadd --system --gid 10001 core \
 && useradd --system --uid 10001 --gid core --home-dir /data --no-create-home core \
 && install -d -o core -g core -m 0750 /data
COPY --from=build /out/refcore /usr/local/bin/refcore

LABEL org.opencontainers.image.title="refcore" \
      org.opencontainers.image.description="The reference Core of the agent work grant contract (SQLite and PostgreSQL)" \
      org.opencontainers.image.licenses="Apache-2.0"

# No secret has a default: CORE_SECRET_KEY and the admin credentials are
# passed at run time (spec §5).
ENV CORE_LISTEN=0.0.0.0:3000 \
    CORE_DATABASE_URL=sqlite:///data/core.db
USER core
WORKDIR /data
VOLUME /data
EXPOSE 3000
ENTRYPOINT ["/usr/local/bin/refcore"]
