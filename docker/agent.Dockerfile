# The profiler agent, built from source with Debian 12's libraries.
FROM debian:bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends build-essential pkg-config \
    zlib1g-dev libzstd-dev liblzma-dev libxxhash-dev libjansson-dev libcurl4-openssl-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY tracereader/ tracereader/
COPY profiler-agent/ profiler-agent/
RUN make -C profiler-agent all && make -C profiler-agent install PREFIX=/opt/hitcurve

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends zlib1g libzstd1 liblzma5 libxxhash0 \
    libjansson4 libcurl4 ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/hitcurve /usr/local
ENTRYPOINT []
