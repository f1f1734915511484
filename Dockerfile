# The predictkit server: a static binary in an otherwise empty image, run
# as a numeric non-root user, with a health check on /readyz.
#
#   docker build -t predictkit .
#   docker run --rm -p 8080:8080 predictkit          # in memory, demo data
#
# Build it from a clone of the repository: the .git directory in the
# build context lets the Go toolchain record the commit, which `predictkit
# version`, predictkit_build_info and the start-up log line show. From a
# tarball or a git worktree (whose .git is a file pointing elsewhere) the
# revision reads "unknown". Podman and Buildah keep HEALTHCHECK only with
# --format docker.

ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# -buildvcs=true fails without a repository; say "unknown" then, not fail.
RUN set -eu; \
    vcs=false; \
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then vcs=true; fi; \
    CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -buildvcs=$vcs -o /out/predictkit ./cmd/predictkit; \
    /out/predictkit version; \
    mkdir -p /out/etc/ssl/certs; \
    cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/

# scratch has no shell, no package manager and no user database: the
# binary, and the CA certificates it needs for TLS to PostgreSQL
# (sslmode=verify-full) and to the chat webhook.
FROM scratch
COPY --from=build /out/ /
# Numeric, so that a runtime (Kubernetes runAsNonRoot) can tell it is not root.
USER 65532:65532
# The default PREDICTKIT_ADDR, :8080, listens on every interface of the
# container.
EXPOSE 8080
# No curl in the image: the binary asks /readyz itself, at the port of
# PREDICTKIT_ADDR. The start period covers connecting and migrating
# (PREDICTKIT_START_TIMEOUT, 1m); -timeout (3s) stays under --timeout.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["/predictkit", "health"]
ENTRYPOINT ["/predictkit"]
CMD ["serve"]
