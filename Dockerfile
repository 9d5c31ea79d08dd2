# The farm image: every farm process (API, worker, beat, migrations, key set-up) runs from it.
FROM python:3.11.10-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

RUN groupadd --system --gid 10001 farm \
    && useradd --system --uid 10001 --gid farm --home-dir /home/farm --create-home farm \
    && mkdir -p /keys /home/farm/.farm \
    && chown farm:farm /keys /home/farm/.farm \
    && chmod 0700 /keys

WORKDIR /opt/farm
COPY pyproject.toml README.md ./
COPY farm ./farm
COPY workers ./workers
COPY migrations ./migrations
RUN pip install . && rm -rf /opt/farm/build

USER farm
WORKDIR /home/farm
ENV FARM_HOME=/home/farm/.farm
ENTRYPOINT ["farm"]
CMD ["--help"]
