# The farm image: every farm process (API, worker, beat, migrations, key set-up) runs from it.
#
# Pinned by exact version tag, not by digest: the digests could not be looked up where this file
# was last edited (no registry access). Pin `python:3.11.10-slim-bookworm@sha256:…` once you can
# (`docker buildx imagetools inspect python:3.11.10-slim-bookworm`).
FROM python:3.11.10-slim-bookworm AS helm

# helm renders chart components (README: "Charts"). The release tarball is verified against the
# checksum the Helm project publishes beside it; set HELM_SHA256 (the release page lists it) to
# pin the digest in the build as well.
ARG HELM_VERSION=3.16.2
ARG HELM_SHA256=""
ARG TARGETARCH=amd64
COPY scripts/fetch_helm.py /tmp/fetch_helm.py
RUN python /tmp/fetch_helm.py "$HELM_VERSION" "$TARGETARCH" /usr/local/bin --sha256 "$HELM_SHA256"

FROM python:3.11.10-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

RUN groupadd --system --gid 10001 farm \
    && useradd --system --uid 10001 --gid farm --home-dir /home/farm --create-home farm \
    && mkdir -p /keys /home/farm/.farm \
    && chown farm:farm /keys /home/farm/.farm \
    && chmod 0700 /keys

COPY --from=helm /usr/local/bin/helm /usr/local/bin/helm
RUN helm version --short

WORKDIR /opt/farm
# constraints.txt pins every dependency, so a rebuild installs the same versions
COPY pyproject.toml README.md constraints.txt ./
COPY farm ./farm
COPY workers ./workers
COPY migrations ./migrations
RUN pip install -c constraints.txt . && rm -rf /opt/farm/build

USER farm
WORKDIR /home/farm
ENV FARM_HOME=/home/farm/.farm
ENTRYPOINT ["farm"]
CMD ["--help"]
