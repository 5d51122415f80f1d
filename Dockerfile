# The hookd image: one static binary on an empty base. The build context is staged by
# scripts/docker-build.sh and holds the binary built with CGO_ENABLED=0, the build machine's CA
# certificates (for HTTPS endpoints) and an /etc/passwd line for the unprivileged user.
#
# Run it with a volume for the SQLite file and the API token from the environment:
#
#   docker run -d -p 8071:8071 -v hookd-data:/data -e HOOKD_TOKEN=... hookd
#
# There is no HEALTHCHECK: the base has no shell or curl. Probe GET /api/v1/health from outside.
FROM scratch

COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY passwd /etc/passwd
COPY --chown=65532:65532 data/ /data/
COPY hookd /hookd

USER 65532:65532
VOLUME /data
EXPOSE 8071

ENTRYPOINT ["/hookd"]
CMD ["serve", "--listen", "0.0.0.0:8071", "--db", "sqlite:/data/hookd.db"]
