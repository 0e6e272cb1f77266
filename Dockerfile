# The bulkhead image the Kubernetes engine's pods run (docs/kubernetes.md): one static binary,
# every part of a run is a subcommand of it (dep, toxiproxy serve, serve, attack, run).
#
#   docker build -t registry.example/bulkhead:v1 . && docker push registry.example/bulkhead:v1
#   bulkhead run hypothesis --engine kubernetes --image registry.example/bulkhead:v1
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /bulkhead ./cmd/bulkhead

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /bulkhead /usr/local/bin/bulkhead
ENTRYPOINT ["bulkhead"]
