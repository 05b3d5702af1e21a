# Runtime image of awg-mcp from a binary built on the host; used by
# scripts/build-images. Keep the runtime part in step with awg-mcp.Dockerfile.
ARG BASE=grantgate/debian:bookworm
FROM ${BASE}

RUN groupadd --system --gid 10001 mcp \
 && useradd --system --uid 10001 --gid mcp --home-dir /nonexistent --no-create-home mcp
COPY awg-mcp /usr/local/bin/awg-mcp

LABEL org.opencontainers.image.title="awg-mcp" \
      org.opencontainers.image.description="MCP adapter for agent work grants on one fixed Core origin" \
      org.opencontainers.image.licenses="Apache-2.0"

# stdio by default (`docker run -i`). Streamable HTTP on the exposed port
# needs AWG_TRANSPORT=http AWG_LISTEN=0.0.0.0:8080 AWG_ALLOW_REMOTE=true:
# leaving loopback stays an explicit choice, so none of it is preset.
USER mcp
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/awg-mcp"]
