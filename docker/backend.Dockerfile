# Backend, worker and beat image (the dashboard is built into frontend/dist and served by it).
FROM node:20-bookworm AS frontend
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm install --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends build-essential && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.lock ./
RUN pip install --no-cache-dir -r requirements.lock
COPY backend/ backend/
COPY worker/ worker/
COPY simulator/ simulator/
COPY tracereader/ tracereader/
COPY migrations/ migrations/
COPY alembic.ini ./
RUN pip install --no-cache-dir --no-deps -e backend -e worker -e simulator/python
COPY --from=frontend /src/frontend/dist frontend/dist
ENV HITCURVE_FRONTEND_DIST=/app/frontend/dist
# API, worker and beat run unprivileged; beat keeps its schedule in /var/lib/hitcurve.
RUN useradd --system --home-dir /var/lib/hitcurve --create-home --shell /usr/sbin/nologin hitcurve
USER hitcurve
