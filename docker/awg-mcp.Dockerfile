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
RUN useradd --system --uid 10001 --user-group --home-dir /nonexistent --no-create-home mcp
COPY --from=build /out/awg-mcp /usr/local/bin/awg-mcp

LABEL org.opencontainers.image.title="awg-mcp" \
      org.opencontainers.image.description="MCP adapter for agent work grants on one fixed Core origin" \
      org.opencontainers.image.licenses="Apache-2.0"

# stdio by default (`docker run -i`). For Streamable HTTP set
# AWG_TRANSPORT=http and AWG_ALLOW_REMOTE=true: the container's port is
# not loopback, so opening it stays an explicit choice.
ENV AWG_LISTEN=0.0.0.0:8080
USER mcp
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/awg-mcp"]
