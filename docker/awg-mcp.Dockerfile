# awg-mcp for machines that reach a registry:
#   docker build -f docker/awg-mcp.Dockerfile -t grantgate/awg-mcp .
# Without a registry, scripts/build-images builds the same runtime image
# from docker/local/awg-mcp.Dockerfile; keep the two runtime parts in step.
ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p awg-mcp \
 && install -D -s target/release/awg-mcp /out/awg-mcp

FROM debian:bookworm-slim
RUN groupadd --system --gid 10001 mcp \
 && useradd --system --uid 10001 --gid mcp --home-dir /nonexistent --no-create-home mcp
COPY --from=build /out/awg-mcp /usr/local/bin/awg-mcp

LABEL org.opencontainers.image.title="awg-mcp" \
      org.opencontainers.image.description="MCP adapter for agent work grants on one fixed Core origin" \
      org.opencontainers.image.licenses="Apache-2.0"

# stdio by default (`docker run -i`). Streamable HTTP on the exposed port
# needs AWG_TRANSPORT=http AWG_LISTEN=0.0.0.0:8080 AWG_ALLOW_REMOTE=true:
# leaving loopback stays an explicit choice, so none of it is preset.
USER mcp
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/awg-mcp"]
