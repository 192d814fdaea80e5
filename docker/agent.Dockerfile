# The profiler agent, built from source with Debian 12's libraries. Runs as the unprivileged
# user `hitcurve` with /etc/hitcurve/agent.conf (profiler-agent/systemd/agent.conf.example);
# flags after the config override it (compose file, deploy/kubernetes/agent-sidecar.yaml).
# The spool (uploads waiting for the backend) is the volume /var/lib/hitcurve-agent.
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
RUN useradd --system --user-group --uid 10001 --home-dir /var/lib/hitcurve-agent --no-create-home \
    --shell /usr/sbin/nologin hitcurve \
    && install -d -o hitcurve -g hitcurve -m 0750 /var/lib/hitcurve-agent /var/lib/hitcurve-agent/spool
COPY --from=build /opt/hitcurve /usr/local
COPY profiler-agent/systemd/agent.conf.example /etc/hitcurve/agent.conf
USER hitcurve
VOLUME /var/lib/hitcurve-agent
ENTRYPOINT []
CMD ["hitcurve-agent", "run", "--config", "/etc/hitcurve/agent.conf"]
